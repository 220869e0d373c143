"""Document ingestion: the ingest agent's stage function (rag-loop-acceptance §1.1) and what the CLI reuses."""

from __future__ import annotations

import logging
import os
from functools import partial
from collections.abc import Callable, Iterator
from pathlib import Path

from ..config import get_settings
from ..embedding import Embedder
from ..models import IngestRequest, IngestResult
from ..models.agent import AgentError
from ..models.ingest import IngestedDocument, IngestIssue, IngestOutputs
from ..store import ChunkStore
from ..store.chunks import DocumentOwned
from .paths import PathRefused, discard_upload, ingest_roots, request_paths
from .pdf import UnreadablePdf
from .pipeline import (
    EmbeddingFailed, EmptyDocument, IngestOutcome, SourceDocument, from_pdf, from_text, ingest_document,
)

log = logging.getLogger("citestream.ingest")

DOCUMENT_ERRORS = (OSError, UnreadablePdf, EmptyDocument, PathRefused, DocumentOwned)
"""Failures that belong to one document: reported in ``errors`` while the others are ingested."""


def pdf_paths(paths: list[str | Path]) -> Iterator[Path]:
    """Files as given; folders expanded to their PDFs, sorted (a stable order gives stable runs)."""
    for p in map(Path, paths):
        yield from (sorted(p.glob("*.pdf")) if p.is_dir() else [p])


def ingest_request(request: IngestRequest, store: ChunkStore, embedder: Embedder,
                   roots: list[Path] | None = None) -> IngestResult:
    """Every document ingested or reported in ``errors``; nothing silently dropped.

    Paths are read only inside ``roots`` (default: ``CITESTREAM_INGEST_ROOTS``) and
    within the size cap (``ingest.paths``); a refused path is an entry in ``errors``
    that says the same whether or not the file exists. PDFs are parsed in a child
    process within the ``CITESTREAM_PDF_*`` limits (``ingest.pdf``).

    A document belongs to its origin (the root it came from, the page's uploads,
    or ``inline`` for a record's text) and only the same origin replaces it:
    uploads get ids of their own (``upload:<name>``), and an inline document or a
    file whose id another origin owns is an entry in ``errors``. The record's
    ``authority`` and ``issuer`` are a publisher's claim: they count for files the
    operator's manifest does not name, never for the scope of uploads or inline
    text (MIXED). An upload's issuer is read from it, or is the uploader's
    ``issuer`` (a correction from the page).

    A document's own failure (unreadable, over a limit, encrypted, no text,
    owned elsewhere) is an entry in ``errors`` and the rest go on; an upload
    that failed is deleted, unless a stored document was ingested from it (a
    failed re-ingest, an issuer correction under load, keeps its file). An
    embedding failure stops the request with ``status == "error"`` and
    ``TASK_FAILED``: documents already written stay
    whole, the failing one is not written at all. Database outages propagate,
    so the agent waits them out and retries.
    """
    outcomes: list[IngestOutcome] = []
    errors: list[IngestIssue] = []
    failure: AgentError | None = None
    settings = get_settings()

    def run(load, where: dict, path: Path | None) -> bool:
        nonlocal failure
        try:
            outcomes.append(ingest_document(load(), store, embedder))
        except DOCUMENT_ERRORS as exc:
            errors.append(IngestIssue(**where, reason=str(exc)))
            if path is not None and not store.holds_source(path):  # a stored upload keeps its file (its pages)
                discard_upload(path, settings.uploads_dir)
        except EmbeddingFailed as exc:
            errors.append(IngestIssue(**where, reason=str(exc)))
            failure = AgentError(code="TASK_FAILED", message=str(exc))
            return False
        return True

    Job = tuple[Callable[[], SourceDocument], dict, Path | None]  # load, where (for errors), the file behind it
    jobs: list[Job] = [(partial(from_text, doc.docId, doc.text, doc.title, doc.source, dict(doc.metadata)),
                        {"docId": doc.docId}, None) for doc in request.documents]
    roots = ingest_roots(settings) if roots is None else [Path(os.path.realpath(r)) for r in roots]
    max_bytes = int(settings.ingest_max_pdf_mb * 1024 * 1024)

    def load_pdf(path: Path | PathRefused) -> SourceDocument:
        if isinstance(path, PathRefused):
            raise path
        return from_pdf(path, max_bytes=max_bytes, roots=roots, claimed=request.authority,
                        claimed_issuer=request.issuer)

    jobs += [(partial(load_pdf, path), {"path": given}, None if isinstance(path, PathRefused) else path)
             for given, path in request_paths(request.paths, roots, settings.ingest_max_files)]
    for load, where, path in jobs:
        if not run(load, where, path):
            break

    warnings = [IngestIssue(docId=o.doc_id, reason=reason) for o in outcomes
                for reason in (o.warnings or (("issuer unknown: stored as MIXED (searchable in MIXED scope)",)
                                              if o.authority_source == "unknown" else ()))]
    for w in warnings:
        log.warning("ingest %s: %s", w.docId, w.reason)
    chunk_ids = [c for o in outcomes for c in o.chunk_ids]
    return IngestResult(
        request_id=request.request_id, policy_version=request.policy_version, trace=list(request.trace),
        index_version=store.index_version(), status="error" if failure else "ok", error=failure,
        outputs=IngestOutputs(
            ingestedCount=len(outcomes), chunkCount=len(chunk_ids), chunkIds=chunk_ids,
            collection=request.collection, docIds=[o.doc_id for o in outcomes], errors=errors, warnings=warnings,
            documents=[IngestedDocument(docId=o.doc_id, pages=o.pages, chunkCount=len(o.chunk_ids), changed=o.changed,
                                        authority=o.authority, authoritySource=o.authority_source, origin=o.origin,
                                        issuer=o.issuer, issuerEvidence=o.evidence[:1000])
                       for o in outcomes],
        ),
    )


__all__ = ["DOCUMENT_ERRORS", "DocumentOwned", "EmbeddingFailed", "EmptyDocument", "IngestOutcome", "PathRefused",
           "SourceDocument", "UnreadablePdf", "from_pdf", "from_text", "ingest_document", "ingest_request", "pdf_paths"]
