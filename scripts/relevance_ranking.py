"""How well each relevance scorer ranks on the dev split: the answering passage and sentence first, and
answerable questions above unanswerable ones (docs/relevance.md, "Which scorer").

For every dev question: the rerank pool of Phase A (the policy's ``rerank_pool`` best fused candidates) with each
quotable sentence of each passage. A passage is *good* when it is on an expected page and holds an expected phrase;
a sentence likewise. Scorers: the cross-encoder alone, the relevance embedder's cosine alone, and their blend at
each weight.
Printed per scorer: good passage at rank 1 and within 6 (the prompt's chunks) when passages are ranked whole and
when ranked by their best sentence; good sentence at rank 1 over the pool; ROC AUC of the best sentence score,
answerable vs unanswerable; and that AUC in the targets' terms (``threshold_ceiling``): the most answerable
questions a threshold on the best score lets through while it refuses 92 % of the unanswerable ones (scope
refusals counted), and the most it refuses while it lets 90 % through. Refuses a held-out test split.

Run: ``CITESTREAM_DATABASE_URL=... python scripts/relevance_ranking.py [--set tests/golden/qa_v2_dev.jsonl]``
(a database holding the corpus, e.g. make eval's ``citestream_eval``); ``--cosine-only`` for the answer flow's score
alone (w 1) without loading the cross-encoder; ``CITESTREAM_RELEVANCE_EMBEDDER=<folder>`` for another embedder (a
folder ``citestream scorer embedder`` wrote, or a sentence-transformers folder as published, zero-shot).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from citestream.deps import get_deps
from citestream.embedding import get_relevance_embedder
from citestream.eval.sets import DEV_SET, blind, contains_phrase, load_set, set_name
from citestream.qa.retrieve.scope import asked_scope
from citestream.relevance import RelevanceModel
from citestream.training.train import auc, threshold_ceiling
from citestream.qa.retrieve.acceptance import rerank_pool
from citestream.qa.retrieve.candidates import gather
from citestream.qa.retrieve.expansion import expand_query
from citestream.qa.retrieve.lexicon import corpus_lexicon
from citestream.core.text_units import scored_units

WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", default=str(DEV_SET))
    parser.add_argument("--cosine-only", action="store_true",
                        help="the relevance embedder's cosine alone (w 1, the answer flow's score): no cross-encoder")
    args = parser.parse_args()
    if blind(set_name(args.set)):
        print("refusing a held-out test split", file=sys.stderr)
        return 2
    deps = get_deps()
    cross = None if args.cosine_only else RelevanceModel(deps.settings.reranker_model, embedding_weight=0.0)
    blend_embedder = get_relevance_embedder()
    size = deps.policy.relevance.rerank_pool
    items = load_set(Path(args.set))
    rows = []
    for item, pool in rerank_pools(deps, items):
        expected = item.expected_pages
        passages = []
        for hit in pool:
            units = scored_units(hit.text)
            on_page = (hit.pdf, hit.page) in expected
            passages.append({
                "good": on_page and bool(contains_phrase(hit.text, item.must_contain_any)),
                "good_units": np.array([on_page and bool(contains_phrase(u, item.must_contain_any)) for u in units]),
                "ce": cross.score(item.question, [hit.text])[0] if cross else 0.0,
                "ce_units": cross.score(item.question, units) if cross else np.zeros(len(units)),
                "cos": _cosine(blend_embedder, item.question, [hit.text])[0],
                "cos_units": _cosine(blend_embedder, item.question, units),
            })
        rows.append((item.answerable, passages))
    answerable = [p for a, p in rows if a]
    print(f"{args.set}: {len(answerable)} answerable questions scored, "
          f"{sum(any(x['good'] for x in p) for p in answerable)} with a good passage in the pool of {size}; "
          f"{len(rows) - len(answerable)} unanswerable")
    print(f"{'cosine weight':>14} {'whole @1':>9} {'whole @6':>9} {'best-sentence @1':>17} {'@6':>4} "
          f"{'sentence @1':>12} {'AUC':>6} {'answered @92% refused':>22} {'refused @90% answered':>22}")
    print(f"relevance embedder: {blend_embedder.name}")
    for w in (1.0,) if args.cosine_only else WEIGHTS:
        whole = lambda x, w=w: (1 - w) * x["ce"] + w * x["cos"]  # noqa: E731
        units = lambda x, w=w: (1 - w) * x["ce_units"] + w * x["cos_units"]  # noqa: E731
        by_whole = [_good_within(p, whole) for p in answerable]
        by_best = [_good_within(p, lambda x, f=units: f(x).max()) for p in answerable]
        sentence_first = sum(_best_sentence_good(p, units) for p in answerable)
        best = [max((units(x).max() for x in p), default=0.0) for _, p in rows]
        area = auc([int(a) for a, _ in rows], best)
        answered, refused = threshold_ceiling([b for b, (a, _) in zip(best, rows) if a],
                                              [b for b, (a, _) in zip(best, rows) if not a],
                                              sum(i.answerable for i in items), sum(not i.answerable for i in items))
        print(f"{w:>14.1f} {sum(r <= 1 for r in by_whole):>9} {sum(r <= 6 for r in by_whole):>9} "
              f"{sum(r <= 1 for r in by_best):>17} {sum(r <= 6 for r in by_best):>4} {sentence_first:>12} "
              f"{area or 0:>6.3f} {answered:>22.3f} {refused:>22.3f}")
    return 0


def rerank_pools(deps, items):
    """Each item the scope refusal does not stop, with Phase A's rerank pool for it (the best fused candidates)."""
    rp, size = deps.policy.retrieval, deps.policy.relevance.rerank_pool
    for item in items:
        asked = asked_scope(item.question, item.scope, deps.search.authorities())
        if asked.refusal:
            continue
        scope = asked.authorities if asked.authorities is not None else item.scope
        variants = expand_query(item.question, lexicon=corpus_lexicon(deps.search))
        yield item, rerank_pool(gather(variants, deps.embedder.embed(variants), scope, deps.search, rp, rp.top_k),
                                rp, size)


_VECTORS: dict[str, np.ndarray] = {}


def _cosine(embedder, question: str, texts: list[str]) -> np.ndarray:
    """Each distinct text embedded once per run: the pools of the questions overlap, and a larger embedder
    (all-mpnet-base-v2) would otherwise spend most of the run on the same passages again."""
    missing = list(dict.fromkeys(t for t in (question, *texts) if t not in _VECTORS))
    _VECTORS.update(zip(missing, embedder.embed(missing).astype(np.float64)))
    return np.clip(np.array([_VECTORS[t] for t in texts]).reshape(len(texts), -1) @ _VECTORS[question], 0.0, 1.0)


def _good_within(passages: list[dict], key) -> int:
    """Rank (1-based) of the first good passage under ``key``; a large number when none is good."""
    ranked = sorted(passages, key=lambda x: -key(x))
    return next((i for i, x in enumerate(ranked, start=1) if x["good"]), 10**6)


def _best_sentence_good(passages: list[dict], units) -> bool:
    scored = [(s, g) for x in passages for s, g in zip(units(x), x["good_units"])]
    return bool(scored) and bool(max(scored, key=lambda sg: sg[0])[1])


if __name__ == "__main__":
    sys.exit(main())
