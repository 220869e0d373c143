"""Read side of the index: candidate chunks for a query, every list from Postgres, scope enforced in SQL.

Three candidate lists feed the hybrid retriever (policy-qa-design-notes §2):
dense cosine over child chunks (pgvector HNSW with iterative scans), and
lexical search over child text and over parent text (a parent hit stands for
its child closest in meaning to the query). ``choose`` then gives every
candidate its cosine similarity computed in SQL, so a lexical-only candidate is
scored exactly like a dense one, and reads the text and embedding of those the
caller goes on with, in the same statement.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Connection, Engine, text

from .db import any_of, as_array, driver_rows, each_of, joined
from .chunks import INDEX_VERSION_SQL, index_version_name, issuer_counts
from .memory_index import MemoryBM25, QueryTerms, query_terms
from .scopes import Among

SCOPE_AUTHORITIES: dict[str, tuple[str, ...] | None] = {
    "MIXED": None,  # every authority, including documents whose authority is unknown
    "FDA": ("FDA",),
    "EMA": ("EMA",),
    "ICH": ("ICH",),
    "SOPS": ("SOPS",),
}

LEXICAL_RANKERS = ("bm25", "ts_rank_cd", "bm25_scan", "bm25_memory")
"""``bm25_scan`` counts N and document frequencies from the corpus on every query: the reference for ``bm25``.
``bm25_memory`` scores the same BM25 from a copy of the index in the worker's memory (``store/memory_index.py``)."""


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
    parent_id: str | None = None
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Ranked:
    """One entry of a candidate list: a child chunk id and the list's own score for it."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class Cosine:
    """A candidate's best cosine to the query's vectors, with its PDF (the fallback gate reads both)."""

    chunk_id: str
    pdf: str
    score: float


Scope = str | tuple[str, ...] | Among
"""A contract scope name (``MIXED``, ``FDA``, ...), the authorities themselves, or ``Among`` authorities and issuers
(a scope inferred from a question)."""


def _among(scope: Scope) -> Among | None:
    """What a scope admits; None = every chunk."""
    if isinstance(scope, Among):
        return scope
    authorities = scope if isinstance(scope, tuple) else SCOPE_AUTHORITIES[scope]
    return None if authorities is None else Among(authorities)


_SPEAKING = f"SELECT d.doc_id FROM documents d WHERE {issuer_counts('d.origin')}"
"""The documents whose issuer a scope may name: the operator's, never an upload or an inline text (issue 54, M1)."""


def _scope_clause(scope: Scope, params: dict, alias: str = "") -> str:
    """The scope as SQL on chunks (``alias``: theirs): its authorities' chunks, or the operator's documents of its
    issuers."""
    among = _among(scope)
    if among is None:
        return ""
    params["auth"] = list(among.authorities)
    if not among.issuers:
        return f" AND {alias}authority = ANY(%(auth)s)"
    params["issuers"] = list(among.issuers)
    return (f" AND ({alias}authority = ANY(%(auth)s)"
            f" OR ({alias}issuer = ANY(%(issuers)s) AND {alias}doc_id IN ({_SPEAKING})))")


# The query's lexemes, normalised by the same 'english' configuration as the stored tsv, OR-ed together.
_QUERY_TERMS = """
    q_terms AS (SELECT DISTINCT lexeme FROM unnest(tsvector_to_array(to_tsvector('english', %(qtext)s))) AS lexeme),
    q AS (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS query FROM q_terms)
"""


def _bm25_sql(kind: str, scope_sql: str, scoped: str, from_stats: bool = True) -> str:
    """Okapi BM25 over the stored tsvector: tf from lexeme positions, dl = lexeme count.

    N, the average length and each term's document frequency come from ``chunk_stats`` and ``lexeme_stats``
    (kept by triggers on chunks, migration 0006): a few index lookups, nothing read per chunk of the corpus.
    Only the chunks holding a query term are read (one GIN index scan), for their term frequencies.
    ``from_stats=False`` is the reference it replaced: the same figures counted from the corpus per query.
    ``scope_sql`` is the scope's clause on the tables' own columns, ``scoped`` on the chunks aliased ``c``.
    """
    if from_stats:
        corpus = f"""
    stats AS (SELECT sum(n)::float AS n, greatest(sum(total_length)::numeric / nullif(sum(n), 0), 1)::float AS avgdl
              FROM chunk_stats WHERE kind = '{kind}'{scope_sql}),
    df AS (SELECT lexeme, sum(df)::float AS df FROM lexeme_stats
           WHERE kind = '{kind}' AND lexeme IN (SELECT lexeme FROM q_terms){scope_sql} GROUP BY lexeme)"""
    else:
        corpus = f"""
    stats AS (SELECT count(*)::float AS n, greatest(avg(length(tsv)), 1)::float AS avgdl
              FROM chunks WHERE kind = '{kind}'{scope_sql}),
    df AS (SELECT lexeme, count(*)::float AS df FROM tf GROUP BY lexeme)"""
    return f"""
    WITH {_QUERY_TERMS},
    matches AS (SELECT c.chunk_id, c.tsv, length(c.tsv)::float AS dl FROM chunks c, q
                WHERE c.kind = '{kind}' AND c.tsv @@ q.query{scoped}),
    tf AS MATERIALIZED (
        SELECT m.chunk_id, m.dl, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float AS tf
        FROM matches m, unnest(ts_filter(setweight(m.tsv, 'A', (SELECT array_agg(lexeme) FROM q_terms)), '{{a}}')) AS u
    ),{corpus}
    SELECT tf.chunk_id,
           sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
               * tf.tf * (%(k1)s + 1) / (tf.tf + %(k1)s * (1 - %(b)s + %(b)s * tf.dl / s.avgdl))) AS score
    FROM tf JOIN df USING (lexeme), stats s
    GROUP BY tf.chunk_id ORDER BY score DESC, tf.chunk_id LIMIT %(k)s
    """


def _ts_rank_sql(kind: str, scoped: str) -> str:
    """Postgres' own cover-density rank (no document frequencies), normalised by document length."""
    return f"""
    WITH {_QUERY_TERMS}
    SELECT c.chunk_id, ts_rank_cd(c.tsv, q.query, 1) AS score FROM chunks c, q
    WHERE c.kind = '{kind}' AND c.tsv @@ q.query{scoped}
    ORDER BY score DESC, c.chunk_id LIMIT %(k)s
    """


_READING = (
    "SELECT set_config('hnsw.ef_search', %(ef)s, true) AS ef_search, "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true) AS iterative_scan, "
    "set_config('client_min_messages', 'warning', true) AS min_messages, "
    f"({INDEX_VERSION_SQL}) AS version, "
    "tsvector_to_array(to_tsvector('english', %(q)s::text)) AS lexemes"
)
"""A reading transaction's settings (SET LOCAL, as ``set_config(..., true)``), the index version and the lexemes of
the question's own text (what ``query_terms`` reads), in one statement; client_min_messages because a stopword-only
query makes a NOTICE."""


class ChunkSearch:
    def __init__(self, engine: Engine):
        self.engine = engine
        self._memory: dict[str, MemoryBM25] = {}
        self._authorities: dict[str, tuple[set[str], set[str]]] = {}  # authorities, issuers: latest index version
        self._conn: Connection | None = None
        self._ef_search = 0
        self._terms: dict[str, QueryTerms] = {}  # a bound reader's query lexemes, shared by both kinds' indexes
        self.index_version: str | None = None
        """A bound reader's index version, read with its settings (the first statement of its transaction)."""

    @contextmanager
    def reading(self, ef_search: int, query: str | None = None) -> Iterator[ChunkSearch]:
        """This search bound to one connection and one read transaction: a question's index version, candidate
        lists and hydration share it (one checkout; the HNSW settings, the version and ``query``'s lexemes for the
        in-memory lexical index in one statement)."""
        if self._conn is not None:
            yield self
            return
        with self.engine.begin() as conn:
            row = driver_rows(conn, _READING, {"ef": str(int(ef_search)), "q": query})[0]
            bound = copy.copy(self)  # shares the in-memory lexical index
            bound._conn, bound._ef_search = conn, int(ef_search)
            bound._terms = {} if query is None else {query: (list(row.lexemes or ()), row.version)}
            bound.index_version = index_version_name(row.version)
            yield bound

    def _connect(self):
        return nullcontext(self._conn) if self._conn is not None else self.engine.connect()

    def exists(self) -> bool:
        """Whether the chunks collection exists; raises nothing (a missing database counts as missing)."""
        try:
            with self.engine.connect() as conn:
                return conn.execute(text("SELECT to_regclass('chunks') IS NOT NULL")).scalar_one()
        except Exception:  # noqa: BLE001  (connection refused, database does not exist, ...)
            return False

    def authorities(self, index_version: str | None = None) -> set[str]:
        """The authorities that have documents in the index; remembered for ``index_version`` when given (documents
        change only with a new index version: ``ChunkStore.replace_document``, ``relabel``)."""
        return set(self._labels(index_version)[0])

    def issuers(self, index_version: str | None = None) -> set[str]:
        """The issuers that have the operator's documents in the index (remembered like ``authorities``): an upload's
        or inline text's issuer is a label anyone may write, so it never makes a regulator's scope (issue 54, M1)."""
        return set(self._labels(index_version)[1])

    def _labels(self, index_version: str | None) -> tuple[set[str], set[str]]:
        if index_version in self._authorities:
            return self._authorities[index_version]
        with self.engine.connect() as conn:
            rows = conn.execute(text("SELECT DISTINCT authority, CASE WHEN "
                                     f"{issuer_counts()} THEN issuer ELSE '' END FROM documents")).all()
        found = {r[0] for r in rows}, {r[1] for r in rows if r[1]}
        if index_version is not None:
            self._authorities.clear()
            self._authorities[index_version] = found
        return found

    def document_names(self, doc_ids: list[str]) -> dict[str, tuple[str, str]]:
        """(title, issuer) of each of ``doc_ids`` that is stored: how a claim may name a passage's document. An
        upload's or inline text's issuer is empty: a label anyone may write is never a regulator's name to the
        verifier ("the MHRA guidance requires ..."; review54b, N6), as it is never a scope (``issuer_counts``)."""
        if not doc_ids:
            return {}
        sql = text(f"SELECT doc_id, title, CASE WHEN {issuer_counts()} THEN issuer ELSE '' END FROM documents "
                   "WHERE doc_id = ANY(:ids)")
        with self._connect() as conn:
            return {r[0]: (r[1] or "", r[2] or "") for r in conn.execute(sql, {"ids": sorted(set(doc_ids))})}

    def document_texts(self) -> dict[str, str]:
        """Each document's text: its parents joined (children for a document without parents)."""
        sql = text("SELECT doc_id, string_agg(text, ' ' ORDER BY chunk_id) FROM chunks "
                   "WHERE kind = 'parent' OR doc_id NOT IN (SELECT doc_id FROM chunks WHERE kind = 'parent') "
                   "GROUP BY doc_id")
        with self.engine.connect() as conn:
            return dict(conn.execute(sql).all())

    # --- candidate lists ----------------------------------------------------------------------------

    def dense(self, embedding: np.ndarray, scope: Scope, k: int, ef_search: int = 100) -> list[Ranked]:
        """Child chunks nearest to ``embedding`` by cosine, best first (ties by chunk_id).

        Iterative scans keep a scope filter from returning fewer than k rows (pgvector >= 0.8).
        """
        params: dict = {"q": embedding, "k": k}
        scope_sql = _scope_clause(scope, params)
        sql = ("SELECT chunk_id, 1 - (embedding <=> %(q)s) AS score FROM chunks "
               f"WHERE kind = 'child' AND embedding IS NOT NULL{scope_sql} ORDER BY embedding <=> %(q)s LIMIT %(k)s")
        ef = max(int(ef_search), int(k))
        with self.reading(ef) as bound, bound._connect() as conn:
            if ef != bound._ef_search:
                conn.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
                bound._ef_search = ef
            rows = driver_rows(conn, sql, params)
        return _ordered(Ranked(r.chunk_id, float(r.score)) for r in rows)

    def lexical(self, query: str, scope: Scope, k: int, ranker: str = "bm25", k1: float = 1.2,
                b: float = 0.75) -> list[Ranked]:
        """Child chunks ranked by lexical match of the query's terms (any term may match), best first."""
        return self._lexical("child", query, scope, k, ranker, k1, b)

    def lexical_parents(self, query: str, embedding: np.ndarray, scope: Scope, k: int, ranker: str = "bm25",
                        k1: float = 1.2, b: float = 0.75) -> list[Ranked]:
        """Parents ranked lexically, each standing for its child closest to ``embedding``; in parent order.

        A term that is spread over a parent but absent from any one child still finds that context.
        """
        parents = self._lexical("parent", query, scope, k, ranker, k1, b)
        if not parents:
            return []
        sql = ("SELECT DISTINCT ON (parent_id) parent_id, chunk_id FROM chunks "
               f"WHERE kind = 'child' AND {any_of('parent_id', 'ids')} AND embedding IS NOT NULL "
               "ORDER BY parent_id, embedding <=> %(q)s, chunk_id")
        with self._connect() as conn:
            best: dict[str, str] = dict(driver_rows(conn, sql, {"ids": joined([p.chunk_id for p in parents]),
                                                                 "q": embedding}))
        return [Ranked(best[p.chunk_id], p.score) for p in parents if p.chunk_id in best]

    def warm(self, ranker: str) -> None:
        """Build the in-memory copies a ranker reads (``bm25_memory``: one per kind) before the first question."""
        if ranker == "bm25_memory":
            for kind in ("child", "parent"):
                self._memory_index(kind).warm()

    def _memory_index(self, kind: str) -> MemoryBM25:
        if kind not in self._memory:
            self._memory[kind] = MemoryBM25(self.engine, kind)
        return self._memory[kind]

    def _lexical(self, kind: str, query: str, scope: Scope, k: int, ranker: str, k1: float, b: float) -> list[Ranked]:
        if ranker not in LEXICAL_RANKERS:
            raise ValueError(f"unknown lexical ranker {ranker!r}; one of {LEXICAL_RANKERS}")
        if ranker == "bm25_memory":
            terms = self._terms.get(query)
            if terms is None:
                with self._connect() as conn:
                    terms = query_terms(conn, query)
                if self._conn is not None:  # within one question's reading transaction
                    self._terms[query] = terms
            found = self._memory_index(kind).search(terms, _among(scope), k, k1, b)
            return [Ranked(chunk_id, score) for chunk_id, score in found]
        params: dict = {"qtext": query, "k": k, "k1": k1, "b": b}
        scope_sql, scoped = _scope_clause(scope, params), _scope_clause(scope, params, "c.")
        # the statistics are kept per authority: a scope that names issuers counts its own
        from_stats = ranker == "bm25" and not (isinstance(scope, Among) and scope.issuers)
        sql = (_ts_rank_sql(kind, scoped) if ranker == "ts_rank_cd" else _bm25_sql(kind, scope_sql, scoped, from_stats))
        with self._connect() as conn:
            if self._conn is None:  # a bound reader set it once
                conn.exec_driver_sql("SET LOCAL client_min_messages = warning")  # stopword-only queries NOTICE
            rows = driver_rows(conn, sql, params)
        return _ordered(Ranked(r.chunk_id, float(r.score)) for r in rows)

    # --- candidates with embeddings and cosine scores ---------------------------------------------------

    def choose(self, ordered_ids: Sequence[str], embeddings: Sequence[np.ndarray], floors: Sequence[float],
               keep: int | None) -> tuple[list[Cosine], list[ChunkHit]]:
        """In one statement, what choosing among fused candidates needs: each one's best cosine to any of
        ``embeddings`` (in [0, 1]) and its PDF, in the given order (ids not in the index left out); and, with their
        text and embedding, the ones read further: the first ``keep`` at or above each of ``floors`` (None: all)."""
        if not ordered_ids:
            return [], []
        params: dict = {"ids": joined(ordered_ids), "keep": keep, **{f"f{i}": float(f) for i, f in enumerate(floors)}}
        counts = "".join(f", count(*) FILTER (WHERE score >= %(f{i})s) OVER (ORDER BY ord) AS n{i}"
                         for i in range(len(floors)))  # how many at or above each floor up to this one
        wanted = "true" if keep is None else (
            " OR ".join(f"(score >= %(f{i})s AND n{i} <= %(keep)s)" for i in range(len(floors))) or "false")
        sql = f"""
        WITH scored AS (
            SELECT f.ord, c.chunk_id, c.pdf, greatest(0, least(1, {_best_cosine(embeddings, params)})) AS score
            FROM {each_of('ids')} AS f(id, ord)
            JOIN chunks c ON c.chunk_id = f.id
        ), marked AS (
            SELECT ord, chunk_id, pdf, score, {wanted} AS wanted FROM (SELECT *{counts} FROM scored) AS counted
        )
        SELECT m.chunk_id, m.pdf, m.score, m.wanted, c.doc_id, c.page, c.section, c.authority, c.text, c.parent_id,
               c.embedding
        FROM marked m LEFT JOIN chunks c ON m.wanted AND c.chunk_id = m.chunk_id ORDER BY m.ord"""
        with self._connect() as conn:
            rows = driver_rows(conn, sql, params, binary=True)
        cosines = [Cosine(r.chunk_id, r.pdf, float(r.score)) for r in rows]
        hits = [ChunkHit(r.chunk_id, r.doc_id, r.pdf, r.page, r.section, r.authority, r.text, float(r.score),
                         r.parent_id, as_array(r.embedding))
                for r in rows if r.wanted]
        return cosines, hits

    def hydrate(self, chunk_ids: Sequence[str], embeddings: Sequence[np.ndarray]) -> list[ChunkHit]:
        """The chunks with their embeddings; ``score`` is the best cosine to any of ``embeddings``, in [0, 1]."""
        if not chunk_ids:
            return []
        params: dict = {"ids": joined(chunk_ids)}
        sql = ("SELECT chunk_id, doc_id, pdf, page, section, authority, text, parent_id, embedding, "
               f"{_best_cosine(embeddings, params)} AS score FROM chunks WHERE {any_of('chunk_id', 'ids')}")
        with self._connect() as conn:
            rows = driver_rows(conn, sql, params, binary=True)
        return [ChunkHit(r.chunk_id, r.doc_id, r.pdf, r.page, r.section, r.authority, r.text, _unit(r.score),
                         r.parent_id, as_array(r.embedding))
                for r in rows]

    def dense_search(self, embedding: np.ndarray, scope: Scope, k: int, ef_search: int = 100) -> list[ChunkHit]:
        """Dense-only hits with their cosine scores, best first (the pre-hybrid read path, kept for callers)."""
        ranked = self.dense(embedding, scope, k, ef_search)
        hits = {h.chunk_id: h for h in self.hydrate([r.chunk_id for r in ranked], [embedding])}
        return sorted((hits[r.chunk_id] for r in ranked if r.chunk_id in hits), key=lambda h: (-h.score, h.chunk_id))


def _best_cosine(embeddings: Sequence[np.ndarray], params: dict) -> str:
    """SQL for a row's best cosine to any of ``embeddings`` (bound into ``params`` as q0, q1, ...)."""
    cosines = []
    for i, vector in enumerate(embeddings):
        params[f"q{i}"] = vector
        cosines.append(f"1 - (embedding <=> %(q{i})s)")
    return cosines[0] if len(cosines) == 1 else f"greatest({', '.join(cosines)})"


def _unit(score) -> float:
    return min(1.0, max(0.0, float(score)))


def _ordered(items) -> list[Ranked]:
    return sorted(items, key=lambda r: (-r.score, r.chunk_id))
