"""Choose the relevance thresholds on the dev split: every combination of the grid, in-process, scored.

``python -m citestream.eval.sweep [--set tests/golden/qa_v2_dev.jsonl]`` prints one line per combination
(answerable pass, unanswerable refused, incorrect refusal, citation precision) and the best by the rule below.
It refuses a held-out test split: thresholds are chosen on dev only (docs/relevance.md).

Every question goes through the stage functions (``flow.QUESTION_PATH``), as in-process answers do. Retrieval runs
once per question (with no backstop; each combination's backstop is then applied to its facts, ``held_back``), and
the model's scores are cached per (question, text), so each further combination costs only the later stages.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import replace
from pathlib import Path
from typing import cast

from .score import fetch_chunk_texts, metrics, score_item
from .sets import DEV_SET, blind, load_set, set_name

GRID = {
    "backstop": (0.02, 0.05, 0.1, 0.2),
    "answer_threshold": (0.3, 0.4, 0.5, 0.6, 0.7),
    "keep_ratio": (0.7, 0.85),
    "max_sentences": (2, 3),
}


def objective(m: dict, answerable: int, unanswerable: int) -> float:
    """The share of questions handled right: answered (strictly) when answerable, refused when not. Every question
    counts once; a rate-sum would reward refusing everything on a set with fewer unanswerable items."""
    return (m["answerable_pass_rate"] * answerable + m["correct_refusal"] * unanswerable) / (answerable + unanswerable)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", default=str(DEV_SET))
    parser.add_argument("--grid", help='JSON overriding the grid, e.g. {"backstop": [0.1]}')
    args = parser.parse_args(argv)
    if blind(set_name(args.set)):
        print("refusing to tune on a held-out test split", file=sys.stderr)
        return 2
    import json

    from ..deps import get_deps
    from ..flow import QUESTION_PATH
    from ..models import FactsRecord
    from ..inprocess import run_steps
    from ..qa.retrieve import held_back
    from .run import questions_for

    grid = {**GRID, **(json.loads(args.grid) if args.grid else {})}
    deps = get_deps()
    items = load_set(Path(args.set))
    questions = questions_for(items)  # a fresh tag: no earlier run's ledger rows
    base = deps.policy
    retrieve_step, later_steps = QUESTION_PATH[0], QUESTION_PATH[1:]
    open_deps = deps.without_backstop()
    facts = {i.id: cast(FactsRecord, run_steps(questions[i.id], (retrieve_step,), open_deps)) for i in items}

    def answer(item_id: str, run: int, grid_deps):
        """The rest of the question path under one combination; each run its own request id (one prompt may get
        another reply under another threshold, and the ledger keeps the first)."""
        record = held_back(facts[item_id], grid_deps.policy.relevance.backstop)
        record = record.model_copy(update={"request_id": f"{record.request_id}-{run}"})
        return run_steps(grid_deps.sealer.seal(record), later_steps, grid_deps)

    n_answerable = sum(i.answerable for i in items)
    results = []
    for run, values in enumerate(itertools.product(*grid.values())):
        grid_deps = deps.with_policy(replace(base, relevance=replace(base.relevance, **dict(zip(grid, values)))))
        answers = {i.id: answer(i.id, run, grid_deps) for i in items}
        texts = fetch_chunk_texts(deps.engine, [s.chunk_id for a in answers.values() for s in a.sentences])
        m = metrics([score_item(i, answers[i.id], texts) for i in items])
        results.append((objective(m, n_answerable, len(items) - n_answerable), values, m))
        print(" ".join(f"{k}={v}" for k, v in zip(grid, values)),
              f"| answerable {m['answerable_pass_rate']:.3f} refused {m['correct_refusal']:.3f} "
              f"incorrect_refusal {m['incorrect_refusal']:.3f} citation {m['citation_precision']:.3f} "
              f"| right {results[-1][0]:.3f}", flush=True)
    best = max(results, key=lambda r: (r[0], -r[2]["incorrect_refusal"]))
    print("best:", " ".join(f"{k}={v}" for k, v in zip(grid, best[1])), f"objective {best[0]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
