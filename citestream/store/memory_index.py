"""BM25 in the worker's memory, scored exactly as the SQL in ``store/search.py`` scores it.

Postgres stays the source of truth: the index is a copy of one kind's tsvectors (lexeme, position count,
lexeme count per chunk), built on first use and rebuilt when ``index_versions`` moves. A query costs one round
trip (the question's lexemes by the same ``to_tsvector('english', ...)``, and the index version) and a sparse
column sum, so it does not read the matching chunks row by row as the SQL does (docs/retrieval.md, "The lexical
index"). Same formula, same figures: N, average length and document frequencies over the scope's chunks.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sqlalchemy import Engine, text

_LOAD = text(
    "SELECT chunk_id, authority, length(tsv), array_agg(u.lexeme), "
    "array_agg(coalesce(array_length(u.positions, 1), 1)) "
    "FROM chunks, unnest(tsv) AS u WHERE kind = :kind GROUP BY chunk_id, authority, tsv ORDER BY chunk_id"
)
_VERSION_SQL = "SELECT coalesce(max(version), 0) FROM index_versions"
_VERSION = text(_VERSION_SQL)
_QUERY = text(f"SELECT tsvector_to_array(to_tsvector('english', :q)), ({_VERSION_SQL})")


class _Snapshot:
    """One kind's chunks at one index version: a chunk × lexeme matrix of term frequencies (CSC: a column per term)."""

    def __init__(self, rows: Sequence, version: int):
        self.version = version
        self.ids = [r[0] for r in rows]  # chunk_id order, the SQL's tie-break (C collation = code point order)
        authorities = [r[1] for r in rows]
        self.authority_names = sorted(set(authorities))
        self.authority = np.array([self.authority_names.index(a) for a in authorities], dtype=np.int32)
        self.length = np.array([r[2] for r in rows], dtype=np.float64)
        self.vocab: dict[str, int] = {}
        cols: list[int] = []
        data: list[float] = []
        indptr = [0]
        for r in rows:
            cols.extend(self.vocab.setdefault(lexeme, len(self.vocab)) for lexeme in r[3])
            data.extend(r[4])
            indptr.append(len(cols))
        self.tf = sparse.csr_matrix((np.array(data, dtype=np.float64), np.array(cols, dtype=np.int64), indptr),
                                    shape=(len(rows), len(self.vocab))).tocsc()

    def in_scope(self, authorities: tuple[str, ...] | None) -> np.ndarray | None:
        if authorities is None:
            return None
        wanted = [self.authority_names.index(a) for a in authorities if a in self.authority_names]
        return np.isin(self.authority, wanted)


class MemoryBM25:
    """``search(query, authorities, k)`` → [(chunk_id, score)], best first, as ``ChunkSearch``'s SQL BM25 returns."""

    def __init__(self, engine: Engine, kind: str):
        self.engine, self.kind = engine, kind
        self._snapshot: _Snapshot | None = None
        self._lock = threading.Lock()

    def _current(self, version: int) -> _Snapshot:
        with self._lock:
            if self._snapshot is None or self._snapshot.version != version:
                with self.engine.connect() as conn:
                    version = conn.execute(_VERSION).scalar_one()  # first: rows read after it are as new or newer
                    rows = conn.execute(_LOAD, {"kind": self.kind}).all()
                self._snapshot = _Snapshot(rows, version)
            return self._snapshot

    def search(self, query: str, authorities: tuple[str, ...] | None, k: int, k1: float = 1.2,
               b: float = 0.75) -> list[tuple[str, float]]:
        with self.engine.connect() as conn:
            lexemes, version = conn.execute(_QUERY, {"q": query}).one()
        snap = self._current(version)
        columns = [snap.vocab[t] for t in dict.fromkeys(lexemes or ()) if t in snap.vocab]
        if not columns or not snap.ids:
            return []
        mask = snap.in_scope(authorities)
        n = len(snap.ids) if mask is None else int(mask.sum())
        if n == 0:
            return []
        avgdl = max(float(snap.length.mean() if mask is None else snap.length[mask].mean()), 1.0)
        scores = np.zeros(len(snap.ids))
        matched = np.zeros(len(snap.ids), dtype=bool)
        for column in columns:
            start, end = snap.tf.indptr[column], snap.tf.indptr[column + 1]
            docs, tf = snap.tf.indices[start:end], snap.tf.data[start:end]
            if mask is not None:
                keep = mask[docs]
                docs, tf = docs[keep], tf[keep]
            if not len(docs):
                continue
            df = float(len(docs))
            idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
            scores[docs] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * snap.length[docs] / avgdl))
            matched[docs] = True
        hits = np.flatnonzero(matched)
        order = hits[np.lexsort((hits, -scores[hits]))][:k]
        return [(snap.ids[i], float(scores[i])) for i in order]
