"""``citestream model ...``: generate questions, build pairs, train, refine. What ``make model`` runs.

Inputs, all reproducible from a clean clone: the corpus PDFs (``../shared/corpus``), FDA's Q&A
(``../shared/data/fda-qa/QnA.csv``), and two generated files committed in ``training-data/`` (outside the package):
the LLM questions and the off-topic questions. ``citestream model questions`` regenerates the first into the
state folder (hours on 2 cores); training takes the state folder's copy when there is one, else the committed one.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from ..config import PROJECT_ROOT, get_settings
from ..embedding import RELEVANCE_EMBEDDER_DIR
from ..relevance.model import DELTA_FILE, METADATA_FILE, SHIPPED_DIR, file_sha256
from .corpus import load_corpus
from .pairs import SOURCES, build_pairs, fdaqa_rows, pairs_sha256, write_pairs
from .embedder import EmbedderConfig
from .questions import STYLES, generate, generate_offtopic, load_questions
from .refine import RefineConfig, refine
from .train import TrainConfig, split_held_out, train

DATA_DIR = PROJECT_ROOT / "training-data"  # corpus-specific: beside the package, not shipped in it
COMMITTED_QUESTIONS = DATA_DIR / "llm_questions.jsonl"
ALL_DOCUMENT_QUESTIONS = DATA_DIR / "llm_questions_all_documents.jsonl"
OFFTOPIC_QUESTIONS = DATA_DIR / "offtopic_questions.txt"
DEFAULT_CORPUS = PROJECT_ROOT.parent / "shared" / "corpus"
DEFAULT_FDAQA = PROJECT_ROOT.parent / "shared" / "data" / "fda-qa" / "QnA.csv"
DEFAULT_TRAINING_DOCS = PROJECT_ROOT.parent / "shared" / "training-docs"
DEFAULT_LLM = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
HELD_OUT_DOCUMENTS = ("CMC_Impurities_Drug_Products.pdf", "IND_Phase1_Content_Format.pdf")


def state_questions() -> Path:
    return get_settings().state_dir / "relevance" / "llm_questions.jsonl"


def questions_file() -> Path:
    return state_questions() if state_questions().exists() else COMMITTED_QUESTIONS


def cmd_questions(args) -> int:
    model = args.llm or str(get_settings().state_dir / "models" / DEFAULT_LLM)
    if not Path(model).exists():
        print(f"no {model}: run `make local-llm` first", file=sys.stderr)
        return 1
    chunks = load_corpus(Path(args.corpus))
    written = generate(chunks, model, state_questions(), total=args.total, styles=args.styles)
    print(f"{written} new questions in {state_questions()}")
    return 0


def cmd_offtopic(args) -> int:
    model = args.llm or str(get_settings().state_dir / "models" / DEFAULT_LLM)
    print(f"{generate_offtopic(model, OFFTOPIC_QUESTIONS)} off-topic questions in {OFFTOPIC_QUESTIONS}")
    return 0


def make_pairs(args, sources) -> list:
    chunks = load_corpus(Path(args.corpus))
    offtopic = [q.strip() for q in OFFTOPIC_QUESTIONS.read_text().splitlines() if q.strip()] \
        if OFFTOPIC_QUESTIONS.exists() else []
    return build_pairs(chunks, load_questions(questions_file()), fdaqa_rows(Path(args.fdaqa)), offtopic,
                       sources=sources, noise=not args.no_noise, llm_claims=load_questions(questions_file(), True))


def cmd_train(args) -> int:
    pairs = make_pairs(args, args.sources)
    train_pairs, held_out = split_held_out(pairs, HELD_OUT_DOCUMENTS if not args.all else ())
    if args.all:
        train_pairs, held_out = pairs, []
    if args.limit:
        train_pairs = train_pairs[:: max(1, len(train_pairs) // args.limit)]
    out = Path(args.out)
    config = replace(TrainConfig(), epochs=args.epochs, layers=args.layers, max_length=args.max_length)
    if args.pairs_out:
        write_pairs(pairs, Path(args.pairs_out))
    print(f"{len(train_pairs)} training pairs, {len(held_out)} held out (sha256 {pairs_sha256(pairs)[:12]})",
          file=sys.stderr)
    meta = train(train_pairs, out, config, held_out, extra_metadata={
        "sources": sorted(args.sources), "noise": not args.no_noise,
        "llm_questions_sha256": file_sha256(questions_file()),
        "held_out_documents": [] if args.all else list(HELD_OUT_DOCUMENTS)})
    print(json.dumps({k: meta[k] for k in ("pairs", "pairs_sha256", "held_out_metrics", "train_seconds")}, indent=1))
    return 0


def cmd_refine(args) -> int:
    """The second stage on top of a first-stage model: mined groups, listwise and pointwise loss, replay."""
    from ..embedding import get_embedder
    from .groups import mine_groups

    base, out = Path(args.base), Path(args.out)
    if not (base / DELTA_FILE).is_file():
        print(f"no first-stage model in {base}: run `citestream model train --out {base}` first", file=sys.stderr)
        return 2
    if base.resolve() == out.resolve():
        print("--out must differ from --base (the base is read while the result is written)", file=sys.stderr)
        return 2
    chunks = load_corpus(Path(args.corpus))
    groups = mine_groups(chunks, load_questions(questions_file()), fdaqa_rows(Path(args.fdaqa)),
                         get_embedder().embed)
    replay = make_pairs(args, SOURCES)
    print(f"{len(groups)} groups, {len(replay)} first-stage pairs to replay from", file=sys.stderr)
    meta = refine(base, groups, replay, out, RefineConfig(), extra_metadata={
        "base_delta_sha256": file_sha256(base / DELTA_FILE), "replay_pairs_sha256": pairs_sha256(replay)})
    print(json.dumps(meta["refine"], indent=1))
    return 0


def cmd_claims(args) -> int:
    """The third stage on top of the refined model: the claims built from corpus sentences, first-stage pairs
    replayed (``claims_stage``)."""
    from .claims_stage import claims_pairs, tune_claims

    base, out = Path(args.base), Path(args.out)
    if not (base / DELTA_FILE).is_file() or base.resolve() == out.resolve():
        print(f"--base must hold a model (`citestream model refine --out {base}`) and differ from --out",
              file=sys.stderr)
        return 2
    claims = claims_pairs(load_corpus(Path(args.corpus)))
    replay = make_pairs(args, SOURCES)
    meta = tune_claims(base, claims, replay, out, HELD_OUT_DOCUMENTS,
                       extra_metadata={"base_delta_sha256": file_sha256(base / DELTA_FILE)})
    print(json.dumps(meta["claims"], indent=1))
    return 0


def cmd_embedder(args) -> int:
    """The relevance embedder: a sentence-transformers base (MiniLM-L6 unless ``--base``) tuned on the mined groups
    of every document's LLM questions. Resumable: checkpoints in the state folder, the same command continues."""
    from ..embedding import base_name, get_embedder, model_path
    from .checkpoint import Interrupted
    from .embedder import examples, train_embedder
    from .groups import groups_by_source, mine_groups
    from .pairs import corpus_acronyms

    base = args.base or model_path()
    if not (Path(base) / "modules.json").is_file():
        print(f"no sentence-transformers model in {base} (for all-mpnet-base-v2: `make mpnet`)", file=sys.stderr)
        return 2
    chunks = load_corpus(Path(args.corpus))
    questions = Path(args.questions)
    groups = mine_groups(chunks, load_questions(questions), fdaqa_rows(Path(args.fdaqa)), get_embedder().embed)
    config = EmbedderConfig(contrasts=args.contrasts, epochs=args.epochs, negatives=args.negatives, chunk=args.chunk)
    rows = examples(groups, corpus_acronyms(chunks), config, {c.pdf: c.authority for c in chunks})
    if args.limit:
        rows = rows[:args.limit]
    print(f"{len(groups)} groups, {len(rows)} training rows", file=sys.stderr)
    extra = {"llm_questions_sha256": file_sha256(questions), "groups": len(groups),
             "groups_by_source": groups_by_source(groups)}
    if args.base:
        extra["base"] = base_name(Path(base))
    if args.limit:
        extra["limit"] = args.limit
    try:
        meta = train_embedder(base, rows, Path(args.out), config, extra_metadata=extra,
                              checkpoints=get_settings().state_dir / "checkpoints",
                              checkpoint_every=args.checkpoint_every)
    except Interrupted as stop:
        print(stop, file=sys.stderr)
        return 128 + stop.signum
    print(json.dumps({k: meta[k] for k in ("examples", "seconds")}))
    return 0


def cmd_judge(args) -> int:
    """The judge (``judge.py``): a cross-encoder trained listwise on the written supervision of the training
    documents (never the dev or test documents), from the shipped relevance cross-encoder or MiniLM-L6. Resumable:
    checkpoints in the state folder, the same command continues. Reports its decision metrics on the dev documents."""
    from ..embedding import get_relevance_embedder
    from .checkpoint import Interrupted
    from .judge import JudgeConfig, decision_metrics, train_judge, unit_scores
    from .judge_data import judge_data
    from .written import DATA_DIR as WRITTEN

    config = JudgeConfig(epochs=args.epochs, layers=args.layers, lr=args.lr, max_length=args.max_length)
    embedder = get_relevance_embedder()
    data = judge_data(Path(args.documents).resolve(), config, embedder.embed)
    if args.replay:
        from ..embedding import get_embedder
        from .groups import mine_groups
        from .judge import replayed_groups

        mined = mine_groups(load_corpus(Path(args.corpus)), load_questions(questions_file()),
                            fdaqa_rows(Path(args.fdaqa)), get_embedder().embed)
        data.train += replayed_groups(mined, args.replay, config.seed)
        data.counts["replayed_groups"] = args.replay
    print(json.dumps(data.counts), file=sys.stderr)

    def on_dev(model, tokenizer) -> dict:
        return {name: decision_metrics(groups, unit_scores(model, tokenizer, groups, config.max_length))
                for name, groups in (("dev_questions", data.dev), ("dev_claims", data.dev_claims))}

    base = None if args.base == "minilm" else Path(args.base)
    extra = {"written_sha256": {f.name: file_sha256(f) for f in sorted(WRITTEN.glob("*.json*"))},
             "data": data.counts}
    try:
        meta = train_judge(data.train, Path(args.out), config, base=base,
                           checkpoints=get_settings().state_dir / "checkpoints", checkpoint_every=args.checkpoint_every,
                           extra_metadata=extra, evaluate_every=args.evaluate_every, evaluate=on_dev)
    except Interrupted as stop:
        print(stop, file=sys.stderr)
        return 128 + stop.signum
    from ..relevance.model import load_compact

    encoder, _ = load_compact(Path(args.out), config.max_length)
    meta["dev"] = on_dev(encoder.model, encoder.tokenizer)
    (Path(args.out) / METADATA_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(json.dumps(meta["dev"], indent=1))
    return 0


def cmd_thresholds(args) -> int:
    """Record the thresholds chosen on the dev split in the artifact's metadata (the policy carries the same)."""
    meta_path = Path(args.model) / METADATA_FILE
    meta = json.loads(meta_path.read_text())
    meta["thresholds"] = {"backstop": args.backstop, "answer_threshold": args.answer_threshold,
                          "embedding_weight": args.embedding_weight, "chosen_on": args.chosen_on}
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(json.dumps(meta["thresholds"]))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("model", help="make the relevance model: questions, training, refinement")
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
    r.add_argument("--base", required=True, help="the first-stage model (`model train --out`)")
    r.add_argument("--out", required=True, help="where the refined model goes")
    r.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    r.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    r.set_defaults(fn=cmd_refine, no_noise=False)

    c = actions.add_parser("claims", help="third stage: train a refined model further on constructed claims")
    c.add_argument("--base", required=True, help="the refined model (`model refine --out`)")
    c.add_argument("--out", required=True, help="where the model goes")
    c.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    c.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    c.set_defaults(fn=cmd_claims, no_noise=False)

    j = actions.add_parser("judge", help="train the judge on the written supervision (training-data/written)")
    j.add_argument("--out", default=str(SHIPPED_DIR), help="where it goes (default: the shipped one)")
    j.add_argument("--base", default=str(SHIPPED_DIR),
                   help="the compact cross-encoder to start from (default: the shipped one); 'minilm' for MiniLM-L6 "
                        "with a fresh head")
    j.add_argument("--documents", default=str(DEFAULT_TRAINING_DOCS), help="the training documents' folder")
    j.add_argument("--epochs", type=float, default=2.0)
    j.add_argument("--layers", type=int, default=6)
    j.add_argument("--lr", type=float, default=3e-5)
    j.add_argument("--max-length", type=int, default=128)
    j.add_argument("--evaluate-every", type=int, default=0, help="steps between dev evaluations (0: at the end)")
    j.add_argument("--replay", type=int, default=0,
                   help="second-stage groups (corpus LLM questions, definitions, FDA Q&A) to train beside the written "
                        "ones, so the judge keeps what its start knew (0, the shipped recipe: none; not yet measured)")
    j.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    j.add_argument("--fdaqa", default=str(DEFAULT_FDAQA))
    j.add_argument("--checkpoint-every", type=int, default=50)
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
