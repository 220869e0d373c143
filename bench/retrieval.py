"""Retrieval quality and latency over the full corpus: dense-only, lexical-only and hybrid side by side.

For every answerable golden item (tests/golden/golden_set*.jsonl) the same question
is retrieved under each mode; a hit is a returned chunk on one of the item's
expected (pdf, page) pairs. Printed per mode and golden set:

- recall@8: share of items with an expected page among the 8 returned chunks
- MRR: mean reciprocal rank of the first expected page in the returned order (highest cosine first)
- fused MRR: the same on the fused candidate ranking before floor/MMR/cosine ordering (ranking quality)
- fallback: share of items that needed the 0.18 fallback
- p50/p99 latency of one retrieval (embedding + SQL + fusion + MMR), milliseconds
- SQL/q and conn/q: statements and pool checkouts per retrieval (one read transaction per question since
  2026-11-25: 11.7 statements and 7.3 checkouts per qa-v2 dev question before, 8.3 and 2.9 after)

then the same over all golden sets pooled.

Run: ``python -m bench.retrieval`` (ingests ../shared/corpus into the bench database once).
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event

from citestream.config import PROJECT_ROOT
from citestream.embedding import get_embedder
from citestream.core.policy import RetrievalPolicy
from citestream.qa.retrieve import search_chunks
from citestream.qa.retrieve.candidates import gather
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


def evaluate(items: list[dict], search: ChunkSearch, embedder, rp: RetrievalPolicy) -> list[dict]:
    """Per item: hit (recall@8), reciprocal rank in the returned and in the fused order, fallback, latency."""
    rows = []
    for item in items:
        expected = {(e["pdf"], int(e["page"])) for e in item["expected"]}
        scope = item.get("scope") or "MIXED"
        with _round_trips(search) as trips:
            started = time.perf_counter()
            selection, trace = search_chunks(item["question"], scope, TOP_K, search, embedder, rp)
            latency_ms = (time.perf_counter() - started) * 1000
        returned = [(h.pdf, h.page) for h in selection.hits]
        variants = trace.expansions  # the query variants search_chunks searched
        fused = gather(variants, embedder.embed(variants), scope, search, rp, TOP_K).hits[:TOP_K]
        rows.append({"hit": any(key in expected for key in returned), "rr": _reciprocal_rank(returned, expected),
                     "fused_rr": _reciprocal_rank([(h.pdf, h.page) for h in fused], expected),
                     "fallback": selection.fallback_used, "ms": latency_ms, **trips})
    return rows


@contextmanager
def _round_trips(search: ChunkSearch):
    """Counts the statements and pool checkouts made inside the block."""
    counts = {"sql": 0, "conn": 0}

    def statement(*_args) -> None:
        counts["sql"] += 1

    def checkout(*_args) -> None:
        counts["conn"] += 1

    event.listen(search.engine, "before_cursor_execute", statement)
    event.listen(search.engine.pool, "checkout", checkout)
    try:
        yield counts
    finally:
        event.remove(search.engine, "before_cursor_execute", statement)
        event.remove(search.engine.pool, "checkout", checkout)


def summarise(rows: list[dict]) -> dict:
    n = max(len(rows), 1)
    latencies = [r["ms"] for r in rows]
    return {"items": len(rows), "recall@8": sum(r["hit"] for r in rows) / n, "mrr": sum(r["rr"] for r in rows) / n,
            "fused_mrr": sum(r["fused_rr"] for r in rows) / n, "fallback_rate": sum(r["fallback"] for r in rows) / n,
            "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99),
            "sql": sum(r["sql"] for r in rows) / n, "conn": sum(r["conn"] for r in rows) / n}


def print_table(title: str, results: dict[str, list[dict]]) -> None:
    print(f"\n{title}, top_k={TOP_K}")
    header = (f"{'mode':<28}{'recall@8':>10}{'MRR':>8}{'fused MRR':>11}{'fallback':>10}{'p50 ms':>9}{'p99 ms':>9}"
              f"{'SQL/q':>7}{'conn/q':>7}")
    print(header)
    print("-" * len(header))
    for name, rows in results.items():
        r = summarise(rows)
        print(f"{name:<28}{r['recall@8']:>10.3f}{r['mrr']:>8.3f}{r['fused_mrr']:>11.3f}"
              f"{r['fallback_rate']:>10.3f}{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}{r['sql']:>7.1f}{r['conn']:>7.1f}")


def main() -> None:
    ensure_corpus()
    search, embedder = ChunkSearch(engine_for()), get_embedder()
    embedder.embed(["warm up"])
    sets = [p for p in sorted(GOLDEN.glob("golden_set*.jsonl"))]
    if not sets:
        raise SystemExit(f"no golden sets under {GOLDEN}")
    pooled: dict[str, list[dict]] = {name: [] for name in MODES}
    for path in sets:
        items = load_items(path)
        results = {name: evaluate(items, search, embedder, rp) for name, rp in MODES.items()}
        print_table(f"{path.name}: {len(items)} answerable items with expected pages", results)
        for name, rows in results.items():
            pooled[name] += rows
    print_table(f"all golden sets: {len(pooled['dense only'])} answerable items", pooled)


if __name__ == "__main__":
    main()
