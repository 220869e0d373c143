"""Documents, chunks and the index version: writes, one transaction per document (searches: search.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, delete, func, insert, select, text, update

from ..core.hashing import sha256_hex
from . import sentence_vectors
from .tables import chunks, documents, index_versions

CHUNK_COLUMNS = ("chunk_id", "doc_id", "kind", "parent_id", "seq", "pdf", "page", "section", "authority", "issuer",
                 "text", "embedding")
_COPY_TYPES = ["text", "text", "text", "text", "int4", "text", "int4", "text", "text", "text", "text", "vector"]

INLINE, UPLOAD, CLI = "inline", "upload", "cli"
"""Origins besides the ingest roots' (``root:<folder name>``): a record's inline text, the web page's uploads, a file
given to the command line outside every root."""
UNRECORDED = ""
"""A document ingested from a file before origins were kept (migration 0011): the next file of its id claims it."""
LABELLED_ONLY = (UPLOAD, INLINE)
"""Origins whose issuer is a label, never a regulator's word: anyone may write "MHRA" on an upload's first page or
claim it for an upload or an inline text, so such a document is shown with its issuer but never searched as that
regulator's (issue 54, M1)."""


def issuer_counts(origin: str = "origin") -> str:
    """SQL true when a document of that ``origin`` column is its issuer's for a question's scope: the operator's."""
    labelled = ", ".join(f"'{o}'" for o in LABELLED_ONLY)
    return f"{origin} NOT IN ({labelled})"


class DocumentOwned(Exception):
    """The document id belongs to another origin's document; nothing was written. The message is safe to publish."""


def may_replace(stored: str, incoming: str) -> bool:
    """A document is replaced only from its own origin (an upload or an inline text never replaces a corpus PDF);
    an inline text holds its id only until a file of that id comes (a publisher who took a corpus file's name, or
    ``upload:<name>`` before inline ids lost their colon, cannot make that file's ingest fail for good)."""
    return stored == incoming or (stored in (UNRECORDED, INLINE) and incoming != INLINE)


def check_owner(doc_id: str, stored: str | None, incoming: str) -> None:
    """``DocumentOwned`` unless a document of origin ``incoming`` may take ``doc_id`` (``stored``: its owner now)."""
    if stored is not None and not may_replace(stored, incoming):
        raise DocumentOwned(f"{doc_id}: a document of origin '{stored}' has this id, and only that origin replaces "
                            f"it (this one is '{incoming}')")


@dataclass
class ChunkRow:
    chunk_id: str
    kind: str
    seq: int
    page: int
    text: str
    section: str | None = None
    parent_id: str | None = None
    embedding: np.ndarray | None = None
    sentence_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    """A child's scored sentence units and their vectors (``text.scored_units``), kept in ``sentence_vectors``."""


@dataclass
class DocumentRow:
    doc_id: str
    pdf: str
    content_sha256: str
    pages: int
    authority: str = "MIXED"
    title: str = ""
    source: str = ""
    metadata: dict = field(default_factory=dict)
    origin: str = CLI
    issuer: str = ""


INDEX_VERSION_SQL = "SELECT coalesce(max(version), 0) FROM index_versions"
"""The current index version's number (0: nothing ingested yet); the in-memory index and a question's reading
transaction read it in their own statements."""


def index_version_name(version: int | None) -> str:
    """The name records carry for an ``index_versions`` number (0: nothing ingested yet)."""
    return f"idx-{version or 0}"


class ChunkStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    # --- writes -----------------------------------------------------------------------------------

    def stored_sha256(self, doc_id: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(
                select(documents.c.content_sha256).where(documents.c.doc_id == doc_id)
            ).scalar_one_or_none()

    def holds_source(self, path: Path) -> bool:
        """Whether a stored document was ingested from the file at ``path`` (its resolved name)."""
        with self.engine.connect() as conn:
            return conn.execute(select(documents.c.doc_id).where(documents.c.source == str(path.resolve()))
                                .limit(1)).first() is not None

    def stored_state(self, doc_id: str) -> tuple[str, str, str | None, str, str] | None:
        """(content sha256, authority, ingest pipeline version, origin, issuer) of a stored document; None when
        absent."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(documents.c.content_sha256, documents.c.authority,
                       documents.c.metadata["_ingest_pipeline"].astext, documents.c.origin, documents.c.issuer)
                .where(documents.c.doc_id == doc_id)
            ).first()
        return (row[0], row[1], row[2], row[3], row[4]) if row else None

    def labels(self, doc_id: str) -> tuple[str, str, dict] | None:
        """(authority, issuer, metadata) of a stored document; None when absent."""
        with self.engine.connect() as conn:
            row = conn.execute(select(documents.c.authority, documents.c.issuer, documents.c.metadata)
                               .where(documents.c.doc_id == doc_id)).first()
        return (row[0], row[1], dict(row[2] or {})) if row else None

    def relabel(self, doc_id: str, authority: str, issuer: str, metadata: dict) -> None:
        """A stored document's issuer and scope changed, its text did not: the document and its chunks take them in
        one transaction, with a new index version (what a scope finds changed), and nothing is embedded again."""
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:doc_id, 0))"), {"doc_id": doc_id})
            conn.execute(update(documents).where(documents.c.doc_id == doc_id)
                         .values(authority=authority, issuer=issuer, metadata=metadata))
            conn.execute(update(chunks).where(chunks.c.doc_id == doc_id).values(authority=authority, issuer=issuer))
            self._bump_index_version(conn)

    def claim(self, doc_id: str, origin: str) -> None:
        """Record ``origin`` for a document stored before origins were kept (``UNRECORDED``), and only for one."""
        with self.engine.begin() as conn:
            conn.execute(update(documents).where(documents.c.doc_id == doc_id, documents.c.origin == UNRECORDED)
                         .values(origin=origin))

    def replace_document(self, doc: DocumentRow, rows: Sequence[ChunkRow]) -> None:
        """Replace a document and all its chunks atomically: readers see the old or the new, never a mix.

        Two writers of the same doc_id (two ingest workers, or a CLI run beside one) take turns on a
        transaction-scoped advisory lock, so the second replaces the first instead of failing on its key. Under
        that lock, a document of another origin is never replaced (``may_replace``): ``DocumentOwned``.
        """
        with self.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:doc_id, 0))"), {"doc_id": doc.doc_id})
            check_owner(doc.doc_id, conn.execute(select(documents.c.origin).where(documents.c.doc_id == doc.doc_id))
                        .scalar(), doc.origin)
            conn.execute(delete(documents).where(documents.c.doc_id == doc.doc_id))  # cascades to chunks
            conn.execute(insert(documents).values(
                doc_id=doc.doc_id, pdf=doc.pdf, title=doc.title, source=doc.source, authority=doc.authority,
                content_sha256=doc.content_sha256, pages=doc.pages, chunk_count=len(rows), metadata=doc.metadata,
                origin=doc.origin, issuer=doc.issuer,
            ))
            raw = conn.connection.driver_connection
            assert raw is not None  # an open connection always has its psycopg connection
            with raw.cursor().copy(
                f"COPY chunks ({', '.join(CHUNK_COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(_COPY_TYPES)
                for r in rows:
                    copy.write_row((r.chunk_id, doc.doc_id, r.kind, r.parent_id, r.seq, doc.pdf, r.page, r.section,
                                    doc.authority, doc.issuer, r.text, r.embedding))
            sentence_vectors.keep(conn, {t: v for r in rows for t, v in r.sentence_vectors.items()})
            self._bump_index_version(conn)

    def expire_uploads(self, older_than_s: float) -> list[str]:
        """Delete the uploads' documents ingested more than ``older_than_s`` seconds ago (their chunks go with them,
        and the index moves on); returns the files they were read from."""
        with self.engine.begin() as conn:
            gone = conn.execute(
                delete(documents).where(documents.c.origin == UPLOAD,
                                        documents.c.ingested_at < func.now() - timedelta(seconds=older_than_s))
                .returning(documents.c.source)).scalars().all()
            if gone:
                self._bump_index_version(conn)
        return list(gone)

    def _bump_index_version(self, conn) -> None:
        digest_rows = conn.execute(
            select(documents.c.doc_id, documents.c.content_sha256).order_by(documents.c.doc_id)
        ).all()
        digest = sha256_hex("\n".join(f"{d}:{s}" for d, s in digest_rows))
        chunk_count = conn.execute(select(func.count()).select_from(chunks)).scalar_one()
        conn.execute(insert(index_versions).values(
            corpus_digest=digest, doc_count=len(digest_rows), chunk_count=chunk_count))

    def refresh_statistics(self) -> None:
        """The planner's figures for the chunks, after an ingest wrote some: on a table that grew since the last
        analysis the planner takes the dense query for a filter on ``kind`` and reads every vector (715 ms at 100x
        the corpus against 19 ms through HNSW, bench/scale.py); autovacuum would analyse later, not before the next
        question. Committed: ANALYZE's figures are transactional. A role that does not own the table (the app role
        on Postgres < 17) is skipped by Postgres with a warning, and autovacuum analyses later."""
        with self.engine.begin() as conn:
            conn.execute(text("ANALYZE chunks"))

    # --- reads ------------------------------------------------------------------------------------

    def index_version(self) -> str:
        with self.engine.connect() as conn:
            return index_version_name(conn.execute(text(INDEX_VERSION_SQL)).scalar_one())

    def count_chunks(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(chunks)).scalar_one()

    def chunk_ids(self, doc_id: str, kind: str | None = None) -> list[str]:
        query = select(chunks.c.chunk_id).where(chunks.c.doc_id == doc_id).order_by(chunks.c.seq)
        if kind is not None:
            query = query.where(chunks.c.kind == kind)
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())
