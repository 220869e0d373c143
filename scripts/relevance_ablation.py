"""What each source of training pairs contributes: train the first stage without it, then measure on the dev split
how often the model ranks an answering sentence first and how well its best score separates answerable from
unanswerable questions (docs/relevance.md, "What each source contributes").

Training at a reduced budget (about 5,000 pairs, ~6 minutes each on 2 idle cores), one model per run:

    citestream scorer train --limit 4000 --out .state/models/abl-none
    citestream scorer train --limit 4000 --sources fdaqa definitions authority premise --out .state/models/abl-llm

Then, against a database holding the corpus (make eval's ``citestream_eval``):

    python scripts/relevance_ablation.py .state/models/abl-none .state/models/abl-llm ...

For every dev question the scope refusal does not stop: the quotable sentences of Phase A's rerank pool (computed
once); each model scores them alone (w 0) and blended with the stock embedding's cosine (w 0.5, as shipped when
the ablation ran; the cross-encoder's sources are what it compares). Printed per
model: answerable questions whose best-scored sentence is a good one (expected page and phrase), and the ROC AUC
of the best score, answerable vs unanswerable. Dev only: thresholds and recipes are never chosen on test.
"""

from __future__ import annotations

import sys

import numpy as np

from relevance_ranking import rerank_pools  # the same pools "Which scorer" measures (scripts/ is on the path)

from citestream.deps import get_deps
from citestream.eval.sets import DEV_SET, contains_phrase, load_set
from citestream.relevance import RelevanceModel
from citestream.training.train import auc
from citestream.core.text_units import scored_units


def dev_pools() -> list[dict]:
    deps = get_deps()
    rows = []
    for item, pool in rerank_pools(deps, load_set(DEV_SET)):
        units, good = [], []
        for hit in pool:
            for unit in scored_units(hit.text):
                units.append(unit)
                good.append((hit.pdf, hit.page) in item.expected_pages
                            and bool(contains_phrase(unit, item.must_contain_any)))
        vectors = deps.embedder.embed([item.question, *units]).astype(np.float64)
        rows.append({"question": item.question, "answerable": item.answerable, "units": units, "good": good,
                     "cos": np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)})
    return rows


def main(models: list[str]) -> int:
    rows = dev_pools()
    labels = [int(r["answerable"]) for r in rows]
    print(f"{sum(labels)} answerable and {len(rows) - sum(labels)} unanswerable dev questions reach retrieval")
    print(f"{'model':<40}{'first @ w 0':>12}{'AUC':>7}{'first @ w 0.5':>15}{'AUC':>7}")
    for name in models:
        model = RelevanceModel(name, embedding_weight=0.0)
        cross = [model.score(r["question"], r["units"]) for r in rows]
        cells = []
        for w in (0.0, 0.5):
            scores = [(1 - w) * c + w * r["cos"] for c, r in zip(cross, rows)]
            first = sum(bool(r["good"][int(np.argmax(s))]) for s, r in zip(scores, rows) if r["answerable"])
            cells += [f"{first:>12}", f"{auc(labels, [float(s.max()) for s in scores]) or 0:>7.3f}"]
        print(f"{name or '(shipped)':<40}{cells[0]}{cells[1]}{cells[2]:>15}{cells[3]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
