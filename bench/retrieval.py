"""Retrieval quality and latency over the full corpus: dense-only, lexical-only and hybrid side by side.

For every answerable golden item (tests/golden/golden_set*.jsonl) the same question
is retrieved under each mode; a hit is a returned chunk on one of the item's
expected (pdf, page) pairs. Printed per mode and golden set:

- recall@8: share of items with an expected page among the 8 returned chunks
- MRR: mean reciprocal rank of the first expected page in the returned order (highest cosine first)
- fused MRR: the same on the fused candidate ranking before floor/MMR/cosine ordering (ranking quality)
- fallback: share of items that needed the 0.18 fallback
- p50/p99 latency of one retrieval (embedding + SQL + fusion + MMR), milliseconds

Run: ``python -m bench.retrieval`` (ingests ../shared/corpus into the bench database once).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from citestream.config import PROJECT_ROOT
from citestream.embedding import get_embedder
from citestream.policy import RetrievalPolicy
from citestream.retrieval import search_chunks
from citestream.retrieval.candidates import gather
from citestream.retrieval.expansion import expand_query
from citestream.store import ChunkSearch, engine_for

from ._support import ensure_corpus, percentile

GOLDEN = PROJECT_ROOT / "tests" / "golden"
TOP_K = 8

MODES: dict[str, RetrievalPolicy] = {
    "dense only": RetrievalPolicy(mode="dense"),
    "lexical only (bm25)": RetrievalPolicy(mode="lexical", lexical_ranker="bm25"),
    "lexical only (ts_rank_cd)": RetrievalPolicy(mode="lexical", lexical_ranker="ts_rank_cd"),
    "hybrid (bm25)": RetrievalPolicy(mode="hybrid", lexical_ranker="bm25"),
    "hybrid (ts_rank_cd)": RetrievalPolicy(mode="hybrid", lexical_ranker="ts_rank_cd"),
}


def load_items(path: Path) -> list[dict]:
    items = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [i for i in items if i.get("answerable") and i.get("expected")]


def _reciprocal_rank(pages: list[tuple[str, int]], expected: set[tuple[str, int]]) -> float:
    return next((1.0 / rank for rank, key in enumerate(pages, start=1) if key in expected), 0.0)


def evaluate(items: list[dict], search: ChunkSearch, embedder, rp: RetrievalPolicy) -> dict:
    recall = mrr = fused_mrr = fallbacks = 0.0
    latencies: list[float] = []
    for item in items:
        expected = {(e["pdf"], int(e["page"])) for e in item["expected"]}
        scope = item.get("scope") or "MIXED"
        started = time.perf_counter()
        selection, _ = search_chunks(item["question"], scope, TOP_K, search, embedder, rp)
        latencies.append((time.perf_counter() - started) * 1000)
        returned = [(h.pdf, h.page) for h in selection.hits]
        recall += any(key in expected for key in returned)
        mrr += _reciprocal_rank(returned, expected)
        fallbacks += selection.fallback_used
        variants = expand_query(item["question"])
        fused = gather(variants, embedder.embed(variants), scope, search, rp, TOP_K).hits[:TOP_K]
        fused_mrr += _reciprocal_rank([(h.pdf, h.page) for h in fused], expected)
    n = max(len(items), 1)
    return {"items": len(items), "recall@8": recall / n, "mrr": mrr / n, "fused_mrr": fused_mrr / n,
            "fallback_rate": fallbacks / n, "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99)}


def main() -> None:
    ensure_corpus()
    search, embedder = ChunkSearch(engine_for()), get_embedder()
    embedder.embed(["warm up"])
    sets = [p for p in sorted(GOLDEN.glob("golden_set*.jsonl"))]
    if not sets:
        raise SystemExit(f"no golden sets under {GOLDEN}")
    for path in sets:
        items = load_items(path)
        print(f"\n{path.name}: {len(items)} answerable items with expected pages, top_k={TOP_K}")
        header = f"{'mode':<28}{'recall@8':>10}{'MRR':>8}{'fused MRR':>11}{'fallback':>10}{'p50 ms':>9}{'p99 ms':>9}"
        print(header)
        print("-" * len(header))
        for name, rp in MODES.items():
            r = evaluate(items, search, embedder, rp)
            print(f"{name:<28}{r['recall@8']:>10.3f}{r['mrr']:>8.3f}{r['fused_mrr']:>11.3f}"
                  f"{r['fallback_rate']:>10.3f}{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}")


if __name__ == "__main__":
    main()
