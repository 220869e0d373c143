"""``citestream scorer ...``: make the trained relevance scorer (questions, training, refinement, the judge, the
embedder, its thresholds). The command keeps its name (``make model`` runs it); the work is in ``training.make``."""

from __future__ import annotations


def add_parser(sub) -> None:
    from ..embedding import RELEVANCE_EMBEDDER_DIR
    from ..relevance.scorer import SHIPPED_DIR
    from ..training.embedder import EmbedderConfig
    from ..training.make import (
        ALL_DOCUMENT_QUESTIONS, DEFAULT_CORPUS, DEFAULT_FDAQA, DEFAULT_LLM, DEFAULT_PUBLIC_QA, DEFAULT_TRAINING_DOCS,
        cmd_claims, cmd_embedder, cmd_judge, cmd_offtopic, cmd_questions, cmd_refine, cmd_thresholds, cmd_train,
    )
    from ..training.pairs import SOURCES
    from ..training.questions import STYLES

    p = sub.add_parser("scorer", help="train the scorers: the relevance embedder and the judge")
    actions = p.add_subparsers(dest="action", required=True)

    q = actions.add_parser("questions", help="have the local LLM write questions about corpus sentences (slow)")
    q.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    q.add_argument("--llm", help=f"GGUF path (default: the state folder's {DEFAULT_LLM}, from make local-llm)")
    q.add_argument("--total", type=int, default=1600, help="sentences to sample (each gets every style)")
    q.add_argument("--styles", nargs="+", default=["own_words", "short"], choices=list(STYLES))
    q.set_defaults(fn=cmd_questions)

    o = actions.add_parser("offtopic", help="have the local LLM write general questions (negatives), committed")
    o.add_argument("--llm", help=f"GGUF path (default: the state folder's {DEFAULT_LLM})")
    o.set_defaults(fn=cmd_offtopic)

    h = actions.add_parser("thresholds", help="record the thresholds chosen on dev in a model's metadata")
    h.add_argument("--model", default=str(SHIPPED_DIR))
    h.add_argument("--backstop", type=float, required=True)
    h.add_argument("--answer-threshold", type=float, required=True)
    h.add_argument("--embedding-weight", type=float, required=True,
                   help="CITESTREAM_RELEVANCE_EMBEDDING_WEIGHT the thresholds were chosen with")
    h.add_argument("--chosen-on", default="qa_v2_dev")
    h.set_defaults(fn=cmd_thresholds)

    t = actions.add_parser("train", help="build the pairs and fine-tune the cross-encoder")
    t.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    t.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    t.add_argument("--sources", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    t.add_argument("--no-noise", action="store_true", help="no typo / acronym copies of the questions")
    t.add_argument("--out", default=str(SHIPPED_DIR), help="where the artifact goes (default: the shipped one)")
    t.add_argument("--epochs", type=float, default=1.0)
    t.add_argument("--layers", type=int, default=6)
    t.add_argument("--max-length", type=int, default=256)
    t.add_argument("--limit", type=int, help="train on about this many pairs (quick experiments)")
    t.add_argument("--all", action="store_true", help="hold nothing out (the shipped model)")
    t.add_argument("--pairs-out", help="also write every pair as JSONL here")
    t.set_defaults(fn=cmd_train)

    r = actions.add_parser("refine", help="second stage: train a first-stage model further on mined groups")
    r.add_argument("--base", required=True, help="the first-stage model (`scorer train --out`)")
    r.add_argument("--out", required=True, help="where the refined model goes")
    r.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    r.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    r.set_defaults(fn=cmd_refine, no_noise=False)

    c = actions.add_parser("claims", help="third stage: train a refined model further on constructed claims")
    c.add_argument("--base", required=True, help="the refined model (`scorer refine --out`)")
    c.add_argument("--out", required=True, help="where the model goes")
    c.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    c.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    c.set_defaults(fn=cmd_claims, no_noise=False)

    j = actions.add_parser("judge", help="train the judge on the written supervision (training-data/written)")
    j.add_argument("--out", default=str(SHIPPED_DIR), help="where it goes (default: the shipped one)")
    j.add_argument("--base", default=str(SHIPPED_DIR),
                   help="the compact cross-encoder to start from (default: the shipped one); 'minilm' for MiniLM-L6 "
                        "with a fresh head; a transformers folder (all-mpnet-base-v2: `make mpnet`) for a full-format "
                        "judge with a fresh head, to teach the served one with --teacher")
    j.add_argument("--documents", default=str(DEFAULT_TRAINING_DOCS), help="the training documents' folder")
    j.add_argument("--written", default=None,
                   help="the written supervision's folder (questions.jsonl, claims.jsonl, split.json; default: "
                        "training-data/written): a candidate batch is measured before it is committed")
    j.add_argument("--epochs", type=float, default=2.0)
    j.add_argument("--layers", type=int, default=6)
    j.add_argument("--lr", type=float, default=3e-5)
    j.add_argument("--max-length", type=int, default=128)
    j.add_argument("--evaluate-every", type=int, default=0, help="steps between dev evaluations (0: at the end)")
    j.add_argument("--replay", type=int, default=0,
                   help="second-stage groups (corpus LLM questions, definitions, FDA Q&A) to train beside the written "
                        "ones, so the judge keeps what its start knew (the shipped recipe: 400)")
    j.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    j.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    j.add_argument("--transfer", type=int, default=0,
                   help="the transfer step instead: train on this many SQuAD 2.0 questions (--public-qa) only, "
                        "to adapt on the written supervision after (--base this one); 0: the written supervision")
    j.add_argument("--public-qa", default=str(DEFAULT_PUBLIC_QA), help="../shared/public-qa")
    j.add_argument("--checkpoint-every", type=int, default=50)
    j.add_argument("--read-background", action="store_true",
                   help="read each written question with its background first: the background judge's recipe")
    j.add_argument("--teacher", action="append",
                   help="train on this judge's scores instead of the labels: a compact one is distilled into --layers "
                        "of its own layers (issue 53); a full-format one (a larger encoder) is taught into --base "
                        "(issue 52); given twice, the mean of the two judges' logits is taught (a blend)")
    j.set_defaults(fn=cmd_judge)

    e = actions.add_parser("embedder", help="tune the embedding model of the relevance blend on mined groups")
    e.add_argument("--out", default=str(RELEVANCE_EMBEDDER_DIR), help="where it goes (default: the shipped one)")
    e.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    e.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    e.add_argument("--questions", default=str(ALL_DOCUMENT_QUESTIONS), help="LLM questions (JSONL)")
    e.add_argument("--epochs", type=int, default=EmbedderConfig.epochs, help="passes over the training rows")
    e.add_argument("--negatives", type=int, default=EmbedderConfig.negatives,
                   help="hard negatives per question (of the 7 each group mines)")
    e.add_argument("--contrasts", type=int, default=EmbedderConfig.contrasts,
                   help="contrast questions (the answer does not answer them) a group gets at most: 0 to 3")
    e.add_argument("--base", help="the sentence-transformers folder to tune (default: the package's MiniLM-L6; "
                                  "all-mpnet-base-v2: `make mpnet`); the artifact loads over the same base")
    e.add_argument("--chunk", type=int, default=EmbedderConfig.chunk,
                   help="texts per forward pass, GradCache (0: the whole batch at once, the shipped recipe; a base "
                        "whose batch does not fit in memory needs one)")
    e.add_argument("--checkpoint-every", type=int, default=10,
                   help="steps between checkpoints (in the state folder; also written on SIGTERM / Ctrl-C)")
    e.add_argument("--limit", type=int, help="train on the first this many rows only (a reduced budget)")
    e.set_defaults(fn=cmd_embedder)
