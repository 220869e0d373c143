"""Read side of the index: candidate chunks for a query, filtered by scope in SQL."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import Engine, text

SCOPE_AUTHORITIES: dict[str, tuple[str, ...] | None] = {
    "MIXED": None,  # every authority, including documents whose authority is unknown
    "FDA": ("FDA",),
    "EMA": ("EMA",),
    "ICH": ("ICH",),
    "SOPS": ("SOPS",),
}


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: str
    doc_id: str
    pdf: str
    page: int
    section: str | None
    authority: str
    text: str
    score: float


class ChunkSearch:
    def __init__(self, engine: Engine):
        self.engine = engine

    def dense_search(self, embedding: np.ndarray, scope: str, k: int, ef_search: int = 100) -> list[ChunkHit]:
        """Child chunks nearest to ``embedding`` by cosine, filtered by scope in SQL, best first.

        Iterative scans keep a scope filter from returning fewer than k rows (pgvector >= 0.8).
        """
        authorities = SCOPE_AUTHORITIES[scope]
        where = "kind = 'child' AND embedding IS NOT NULL"
        params: dict = {"q": embedding, "k": k}
        if authorities is not None:
            where += " AND authority = ANY(:auth)"
            params["auth"] = list(authorities)
        sql = text(
            "SELECT chunk_id, doc_id, pdf, page, section, authority, text, "
            "1 - (embedding <=> :q) AS score "
            f"FROM chunks WHERE {where} ORDER BY embedding <=> :q LIMIT :k"
        )
        with self.engine.begin() as conn:
            conn.execute(text(f"SET LOCAL hnsw.ef_search = {int(ef_search)}"))
            conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
            rows = conn.execute(sql, params).all()
        hits = [ChunkHit(r.chunk_id, r.doc_id, r.pdf, r.page, r.section, r.authority, r.text,
                         min(1.0, max(0.0, float(r.score)))) for r in rows]
        return sorted(hits, key=lambda h: (-h.score, h.chunk_id))

