"""BM25 in the worker's memory, scored exactly as the SQL in ``store/search.py`` scores it.

Postgres stays the source of truth: the index is a copy of one kind's tsvectors (lexeme, position count,
lexeme count per chunk), built on first use and brought up to date when ``index_versions`` moves. A query costs one
round trip, for both kinds (the question's lexemes by the same ``to_tsvector('english', ...)``, and the index
version), and a sparse column sum, so it does not read the matching chunks row by row as the SQL does
(docs/retrieval.md, "The lexical index"). Same formula, same figures: N, average length and document frequencies
over the scope's chunks.

An update reads only the documents written since the last one (a document's row and its chunks are written by one
transaction, so the row's ``xmin`` names that version of its chunks) and drops the documents that are gone; the
others' rows are kept, so an ingest of one document costs its own rows, not the corpus.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from sqlalchemy import Connection, Engine, text

from .chunks import INDEX_VERSION_SQL, issuer_counts
from .db import driver_rows
from .scopes import Among

_DOCUMENTS = text("SELECT doc_id, xmin::text || ' ' || ingested_at::text FROM documents")
_LOAD = text(
    "SELECT c.doc_id, c.chunk_id, c.authority, length(c.tsv), array_agg(u.lexeme), "
    "array_agg(coalesce(array_length(u.positions, 1), 1)), "
    f"CASE WHEN {issuer_counts('d.origin')} THEN c.issuer ELSE '' END "
    "FROM chunks c JOIN documents d ON d.doc_id = c.doc_id, unnest(c.tsv) AS u "
    "WHERE c.kind = :kind AND c.doc_id = ANY(:docs) "
    "GROUP BY c.doc_id, c.chunk_id, c.authority, c.issuer, d.origin, c.tsv"
)
"""A document's rows of one kind; the issuer is the one its scope may name: none for an upload or an inline text,
whose issuer is a label anyone may write (issue 54, M1)."""
_VERSION = text(INDEX_VERSION_SQL)
_QUERY = f"SELECT tsvector_to_array(to_tsvector('english', %(q)s)), ({INDEX_VERSION_SQL})"


QueryTerms = tuple[list[str], int]
"""A query's lexemes (by the index's own ``to_tsvector('english', ...)``) and the index version they were read at."""


def query_terms(conn: Connection, query: str) -> QueryTerms:
    """One round trip on ``conn`` (the question's reading transaction): the query's lexemes and the index version.
    The same for either kind's index, so a reader asks once per query."""
    lexemes, version = driver_rows(conn, _QUERY, {"q": query})[0]
    return list(lexemes or ()), version


class _Document:
    """One document's chunks of the kind: ids, authorities, issuers (those a scope may name: ``_LOAD``), lengths and a
    chunk × lexeme term-frequency block whose columns are the index's vocabulary (which only grows: a column no chunk
    uses any more matches nothing)."""

    def __init__(self, written: str, rows: Sequence, vocab: dict[str, int]):
        self.written = written
        self.ids = [r[1] for r in rows]
        self.authorities = [r[2] for r in rows]
        self.issuers = [r[6] for r in rows]
        self.length = np.array([r[3] for r in rows], dtype=np.float64)
        cols: list[int] = []
        data: list[float] = []
        indptr = [0]
        for r in rows:
            cols.extend(vocab.setdefault(lexeme, len(vocab)) for lexeme in r[4])
            data.extend(r[5])
            indptr.append(len(cols))
        self.tf = sparse.csr_matrix((np.array(data, dtype=np.float64), np.array(cols, dtype=np.int64), indptr),
                                    shape=(len(rows), len(vocab)))


class _Snapshot:
    """One kind's chunks at one index version: every document's block stacked, as a CSC matrix (a column per
    term); ``rank`` is each chunk's place in chunk_id order, the SQL's tie-break (C collation = code point order)."""

    def __init__(self, documents: dict[str, _Document], vocab: dict[str, int], version: int):
        self.version = version
        self.documents = documents
        self.vocab = vocab
        parts = [d for d in documents.values() if d.ids]
        self.ids = [i for d in parts for i in d.ids]
        authorities = [a for d in parts for a in d.authorities]
        self.authority_names = sorted(set(authorities))
        self.authority = np.array([self.authority_names.index(a) for a in authorities], dtype=np.int32)
        issuers = [i for d in parts for i in d.issuers]
        self.issuer_names = sorted(set(issuers))
        self.issuer = np.array([self.issuer_names.index(i) for i in issuers], dtype=np.int32)
        self.length = np.concatenate([d.length for d in parts]) if parts else np.zeros(0)
        self.rank = np.empty(len(self.ids), dtype=np.int64)
        self.rank[sorted(range(len(self.ids)), key=self.ids.__getitem__)] = np.arange(len(self.ids))
        for d in parts:  # blocks built before the vocabulary grew get the new (empty) columns
            d.tf.resize((d.tf.shape[0], len(vocab)))
        self.tf = (sparse.vstack([d.tf for d in parts], format="csr").tocsc() if parts
                   else sparse.csc_matrix((0, len(vocab))))

    def in_scope(self, among: Among | None) -> np.ndarray | None:
        """The chunks a scope admits (None: all): of its authorities, or issued by its issuers."""
        if among is None:
            return None
        wanted = [self.authority_names.index(a) for a in among.authorities if a in self.authority_names]
        mask = np.isin(self.authority, wanted)
        if among.issuers:
            mask |= np.isin(self.issuer, [self.issuer_names.index(i) for i in among.issuers
                                          if i in self.issuer_names])
        return mask


class MemoryBM25:
    """``search(query, among, k)`` → [(chunk_id, score)], best first, as ``ChunkSearch``'s SQL BM25 returns."""

    def __init__(self, engine: Engine, kind: str):
        self.engine, self.kind = engine, kind
        self._snapshot: _Snapshot | None = None
        self._lock = threading.Lock()
        self.documents_read = 0
        """Documents whose rows the updates have read so far (a benchmark's and a test's view of the work)."""

    def warm(self) -> None:
        """Build the copy now (a worker at start), not on the first question."""
        self._current(None)

    def _current(self, version: int | None) -> _Snapshot:
        """The copy at least as new as ``version`` (None: any copy); a newer one than the caller's is as good."""
        with self._lock:
            if self._snapshot is None or (version is not None and self._snapshot.version < version):
                with self.engine.connect().execution_options(isolation_level="REPEATABLE READ") as conn, \
                        conn.begin():  # the version, the documents and their rows from one snapshot
                    self._snapshot = self._update(conn, self._snapshot)
            return self._snapshot

    def _update(self, conn: Connection, old: _Snapshot | None) -> _Snapshot:
        version = conn.execute(_VERSION).scalar_one()
        written: dict[str, str] = {doc: mark for doc, mark in conn.execute(_DOCUMENTS)}
        kept = old.documents if old else {}
        vocab = dict(old.vocab) if old else {}
        documents = {doc: kept[doc] for doc, mark in written.items() if doc in kept and kept[doc].written == mark}
        todo = [doc for doc in written if doc not in documents]
        rows: dict[str, list] = {doc: [] for doc in todo}
        if todo:
            for row in conn.execute(_LOAD, {"kind": self.kind, "docs": todo}):
                rows[row[0]].append(row)
        for doc in todo:
            documents[doc] = _Document(written[doc], rows[doc], vocab)
        self.documents_read += len(todo)
        return _Snapshot(documents, vocab, version)

    def megabytes(self) -> float:
        """The copy's term-frequency matrix in memory (what a worker holds per kind), 0 before the first search."""
        tf = self._snapshot.tf if self._snapshot is not None else None
        return 0.0 if tf is None else (tf.data.nbytes + tf.indices.nbytes + tf.indptr.nbytes) / 2**20

    def search(self, terms: QueryTerms, among: Among | None, k: int, k1: float = 1.2,
               b: float = 0.75) -> list[tuple[str, float]]:
        """``terms`` from ``query_terms``; an update, when the index version moved, reads on a connection of its
        own."""
        lexemes, version = terms
        snap = self._current(version)
        columns = [snap.vocab[t] for t in dict.fromkeys(lexemes) if t in snap.vocab]
        if not columns or not snap.ids:
            return []
        mask = snap.in_scope(among)
        n = len(snap.ids) if mask is None else int(mask.sum())
        if n == 0:
            return []
        avgdl = max(float(snap.length.mean() if mask is None else snap.length[mask].mean()), 1.0)
        # every matching entry of the query's columns at once, column by column, so each chunk's score adds its
        # terms in the query's order (the figures of a loop over the columns, to the last bit)
        starts, ends = snap.tf.indptr[columns], snap.tf.indptr[np.add(columns, 1)]
        entries = np.concatenate([np.arange(start, end) for start, end in zip(starts, ends)])
        term = np.repeat(np.arange(len(columns)), ends - starts)
        docs, tf = snap.tf.indices[entries], snap.tf.data[entries]
        if mask is not None:
            keep = mask[docs]
            docs, tf, term = docs[keep], tf[keep], term[keep]
        df = np.bincount(term, minlength=len(columns)).astype(np.float64)
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        weights = idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * snap.length[docs] / avgdl))
        scores = np.bincount(docs, weights=weights, minlength=len(snap.ids))
        matched = np.zeros(len(snap.ids), dtype=bool)
        matched[docs] = True
        hits = np.flatnonzero(matched)
        order = hits[np.lexsort((snap.rank[hits], -scores[hits]))][:k]
        return [(snap.ids[i], float(scores[i])) for i in order]
