"""``citestream verify-eval``: score the claim verifier on a golden claims set over the corpus."""

from __future__ import annotations

import json


def add_parser(sub) -> None:
    p = sub.add_parser("verify-eval", help="score the claim verifier on a golden claims set over the corpus")
    p.add_argument("--golden", default="tests/golden/claims_corpus.jsonl")
    p.add_argument("--corpus", default="../shared/corpus", help="where the golden set's PDFs are (ingested first)")
    p.add_argument("--no-ingest", action="store_true", help="score against what is already ingested")
    p.add_argument("--top-k", type=int, default=8)
    p.add_argument("--judge", choices=["relevance", "rules", "llm"], default="relevance")
    p.add_argument("--min-accuracy", type=float, default=0.0, help="exit 1 below this accuracy")
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(fn=cmd_verify_eval)


def cmd_verify_eval(args) -> int:
    from ..eval.claims import run_eval

    report = run_eval(args.golden, None if args.no_ingest else args.corpus, k=args.top_k, judge=args.judge)
    if args.verbose:
        for r in report["results"]:
            print(f"{'ok ' if r['correct'] else 'BAD'} {r['id']} {r['label']:<12} {r['verdict']:<8} {r['evidence']} "
                  f"{r['rationale']}")
    print(json.dumps({k: v for k, v in report.items() if k != "results"}))
    return 0 if report["accuracy"] >= args.min_accuracy else 1
