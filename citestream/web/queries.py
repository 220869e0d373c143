"""The page's reads from Postgres: the document list, one chunk with its document, one request's ledger rows.

Reads only; the page writes nothing to the database (questions and uploads go
through Kafka like any other client's).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import Engine, func, select

from ..ops.replay import replay
from ..store import Ledger, RequestTracker
from ..store.chunks import index_version_name
from ..store.tables import audit_ledger, chunks, documents, index_versions


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    pdf: str
    title: str
    authority: str
    pages: int
    chunks: int
    index_version: str
    ingested_at: str
    source: str
    content_sha256: str
    origin: str  # root:<folder> | upload | inline | cli: who owns it (store.chunks.may_replace)
    issuer: str = ""  # who issued it (core.regulators); '' when unknown
    issuer_source: str = ""  # where that came from: manifest, first-page, uploader, ... (ingest.issuer)


@dataclass(frozen=True)
class ChunkInfo:
    chunk_id: str
    kind: str
    page: int
    section: str | None
    text: str
    document: DocumentInfo


def _document_columns():
    children = (select(func.count()).select_from(chunks)
                .where(chunks.c.doc_id == documents.c.doc_id, chunks.c.kind == "child").scalar_subquery())
    # The index version written in the document's own transaction: the latest one not after its ingest time.
    version = (select(func.max(index_versions.c.version))
               .where(index_versions.c.created_at <= documents.c.ingested_at).scalar_subquery())
    return [documents.c.doc_id, documents.c.pdf, documents.c.title, documents.c.authority, documents.c.pages,
            children.label("chunks"), version.label("version"), documents.c.ingested_at, documents.c.source,
            documents.c.content_sha256, documents.c.origin, documents.c.issuer,
            documents.c.metadata["_issuer"]["source"].astext.label("issuer_source")]


def _document(row) -> DocumentInfo:
    return DocumentInfo(row.doc_id, row.pdf, row.title, row.authority, row.pages, row.chunks,
                        index_version_name(row.version), row.ingested_at.isoformat(), row.source, row.content_sha256,
                        row.origin, row.issuer, row.issuer_source or "")


def list_documents(engine: Engine) -> list[DocumentInfo]:
    with engine.connect() as conn:
        rows = conn.execute(select(*_document_columns()).order_by(documents.c.pdf)).all()
    return [_document(r) for r in rows]


def get_document(engine: Engine, doc_id: str) -> DocumentInfo | None:
    with engine.connect() as conn:
        row = conn.execute(select(*_document_columns()).where(documents.c.doc_id == doc_id)).first()
    return _document(row) if row else None


def get_chunk(engine: Engine, chunk_id: str) -> ChunkInfo | None:
    with engine.connect() as conn:
        row = conn.execute(select(chunks.c.chunk_id, chunks.c.doc_id, chunks.c.kind, chunks.c.page, chunks.c.section,
                                  chunks.c.text).where(chunks.c.chunk_id == chunk_id)).first()
    if row is None:
        return None
    document = get_document(engine, row.doc_id)
    if document is None:  # replaced between the two reads
        return None
    return ChunkInfo(row.chunk_id, row.kind, row.page, row.section, row.text, document)


def public_document(doc: DocumentInfo) -> dict:
    """What the browser sees of a document: not the server path it was read from."""
    data = asdict(doc)
    data.pop("source")
    return data


def ledger_rows(engine: Engine, request_id: str) -> list[dict]:
    """The request's ledger rows (without the replay payload), each replayed."""
    ledger = Ledger(engine)
    columns = [c for c in audit_ledger.c if c.name != "payload"]
    with engine.connect() as conn:
        rows = conn.execute(select(*columns).where(audit_ledger.c.request_id == request_id)
                            .order_by(audit_ledger.c.id)).mappings().all()
    replays = {r.row_id: r for r in replay(ledger, request_id)}
    out_rows = []
    for row in rows:
        replayed = replays.get(row["id"])
        out_rows.append({
            **{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()},
            "replay": None if replayed is None else {"ok": replayed.ok, "rebuilt_sha256": replayed.rebuilt_sha256,
                                                     "reason": replayed.reason},
        })
    return out_rows


def chain_status(engine: Engine) -> dict:
    """The whole ledger's hash chain, verified (it reads every row)."""
    chain = Ledger(engine).verify()
    return {"ok": chain.ok, "rows": chain.rows, "first_broken_id": chain.first_broken_id, "reason": chain.reason}


def request_state(engine: Engine, request_id: str) -> dict | None:
    row = RequestTracker(engine).get(request_id)
    if row is None:
        return None
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}
