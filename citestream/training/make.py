"""``citestream scorer ...``: generate questions, build pairs, train, refine. What ``make model`` runs.

Inputs, all reproducible from a clean clone: the corpus PDFs (``../shared/corpus``), FDA's Q&A
(``../shared/data/fda-qa/QnA.csv``), and two generated files committed in ``training-data/`` (outside the package):
the LLM questions and the off-topic questions. ``citestream scorer questions`` regenerates the first into the
state folder (hours on 2 cores); training takes the state folder's copy when there is one, else the committed one.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from ..config import PROJECT_ROOT, get_settings
from ..relevance.scorer import DELTA_FILE, METADATA_FILE, file_sha256
from .corpus import load_corpus
from .pair_set import build_pairs, pairs_sha256, write_pairs
from .pairs import SOURCES, fdaqa_rows
from .embedder import EmbedderConfig
from .questions import generate, generate_offtopic, load_questions
from .refine import RefineConfig, refine
from .train import TrainConfig, split_held_out, train

DATA_DIR = PROJECT_ROOT / "training-data"  # corpus-specific: beside the package, not shipped in it
COMMITTED_QUESTIONS = DATA_DIR / "llm_questions.jsonl"
ALL_DOCUMENT_QUESTIONS = DATA_DIR / "llm_questions_all_documents.jsonl"
OFFTOPIC_QUESTIONS = DATA_DIR / "offtopic_questions.txt"
DEFAULT_CORPUS = PROJECT_ROOT.parent / "shared" / "corpus"
DEFAULT_FDAQA = PROJECT_ROOT.parent / "shared" / "data" / "fda-qa" / "QnA.csv"
DEFAULT_TRAINING_DOCS = PROJECT_ROOT.parent / "shared" / "training-docs"
DEFAULT_PUBLIC_QA = PROJECT_ROOT.parent / "shared" / "public-qa"
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
        print(f"no first-stage model in {base}: run `citestream scorer train --out {base}` first", file=sys.stderr)
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
        print(f"--base must hold a model (`citestream scorer refine --out {base}`) and differ from --out",
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
    from .pair_noise import corpus_acronyms

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

    config = JudgeConfig(epochs=args.epochs, layers=args.layers, lr=args.lr, max_length=args.max_length,
                         read_background=args.read_background)
    embedder = get_relevance_embedder()
    written = Path(args.written) if args.written else WRITTEN
    data = judge_data(Path(args.documents).resolve(), config, embedder.embed, written)
    if args.transfer:  # the transfer step: general-domain groups only; the written dev groups still measure it
        from .public_qa import squad_groups

        data.train = squad_groups(Path(args.public_qa), args.transfer, config.seed, config.max_units)
        data.counts.update(train_questions=0, train_claims=0, transfer_groups=len(data.train))
    elif args.replay:
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
    extra = {"written_sha256": {f.name: file_sha256(f) for f in sorted(written.glob("*.json*"))},
             "data": data.counts}
    try:
        meta = train_judge(data.train, Path(args.out), config, base=base,
                           checkpoints=get_settings().state_dir / "checkpoints", checkpoint_every=args.checkpoint_every,
                           extra_metadata=extra, evaluate_every=args.evaluate_every, evaluate=on_dev,
                           teachers=[Path(t) for t in args.teacher or ()])
    except Interrupted as stop:
        print(stop, file=sys.stderr)
        return 128 + stop.signum
    from .judge import is_full, load_judge, metadata_file

    out = Path(args.out)
    meta["dev"] = on_dev(*load_judge(out, config.max_length))
    (out / metadata_file(is_full(out))).write_text(
        json.dumps(meta, indent=2, sort_keys=True) + "\n")
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
