"""HNSW ``ef_search``: recall of the dense list against an exact scan, and its time, at 1× and 100× the corpus.

The dense list (child chunks, top 40, the size retrieval asks for) is taken with the HNSW index at each
``ef_search`` and once exactly (index scans off: a sequential scan computes every distance). Recall@40 is the
share of the exact list the index returns. Questions: the golden sets' questions, embedded once. The 100×
database is ``bench/scale.py``'s (built there, reused here; skipped when it does not exist yet).

Printed: per scale and ``ef_search``, recall@40 and mean ms per list. The policy's value
(``RetrievalPolicy.hnsw_ef_search``) is chosen from this curve (docs/retrieval.md).
Run: ``python -m bench.hnsw``.
"""

from __future__ import annotations

import os
import time

import numpy as np
from sqlalchemy import text

from citestream.config import get_settings
from citestream.embedding import get_embedder
from citestream.core.policy import RetrievalPolicy
from citestream.store import engine_for
from citestream.store.db import as_array

from ._support import ensure_corpus
from .retrieval import GOLDEN, load_items
from .scale import _url

EF_VALUES = (16, 40, 64, 100, 200, 400)
K = 40
SCALES = [int(s) for s in os.environ.get("HNSW_SCALES", "1,100").split(",")]
_QUERY = text("SELECT chunk_id FROM chunks WHERE kind = 'child' AND embedding IS NOT NULL "
              "ORDER BY embedding <=> :q LIMIT :k")


def dense_ids(conn, vector: np.ndarray, ef_search: int | None) -> list[str]:
    """One top-K list: through the index at ``ef_search``, or exact (``None``: index scans off)."""
    if ef_search is None:
        conn.execute(text("SET LOCAL enable_indexscan = off"))
    else:
        conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
        conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
    return list(conn.execute(_QUERY, {"q": as_array(vector), "k": K}).scalars())


def measure(url: str, vectors: list[np.ndarray]) -> list[tuple[int, float, float]]:
    """(ef_search, recall@K, mean ms) per ``EF_VALUES``."""
    engine = engine_for(url)
    exact = []
    for vector in vectors:
        with engine.begin() as conn:
            exact.append(set(dense_ids(conn, vector, None)))
    rows = []
    for ef in EF_VALUES:
        recalls, seconds = [], 0.0
        for vector, truth in zip(vectors, exact, strict=True):
            with engine.begin() as conn:
                started = time.perf_counter()
                found = dense_ids(conn, vector, ef)
                seconds += time.perf_counter() - started
            recalls.append(len(truth.intersection(found)) / max(1, len(truth)))
        rows.append((ef, float(np.mean(recalls)), 1000 * seconds / len(vectors)))
    engine.dispose()
    return rows


def main() -> None:
    ensure_corpus()
    base = get_settings().database_url
    questions = [i["question"] for path in sorted(GOLDEN.glob("golden_set*.jsonl")) for i in load_items(path)]
    vectors = list(get_embedder().embed(questions))
    print(f"dense top-{K}, {len(questions)} golden questions; policy ef_search = {RetrievalPolicy().hnsw_ef_search}")
    for factor in SCALES:
        url = _url(base, factor)
        try:
            with engine_for(url).connect() as conn:
                chunks = conn.execute(text("SELECT count(*) FROM chunks WHERE kind = 'child'")).scalar_one()
        except Exception:  # the grown database is bench/scale.py's to build
            print(f"{factor}x: no database yet (run `BENCH=scale make bench` first)")
            continue
        print(f"{factor}x ({chunks} child chunks)   ef_search  recall@{K}  ms/list")
        for ef, recall, ms in measure(url, vectors):
            print(f"{'':>28}{ef:>9}  {recall:>9.3f}  {ms:>7.2f}")


if __name__ == "__main__":
    main()
