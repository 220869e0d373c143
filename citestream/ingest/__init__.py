"""Document ingestion: the ingest agent's stage function and the CLI's path walker."""

from __future__ import annotations

from pathlib import Path

from ..embedding import Embedder
from ..models import IngestRequest, IngestResult
from ..models.ingest import IngestIssue, IngestOutputs
from ..store import ChunkStore
from .pdf import UnreadablePdf
from .pipeline import IngestOutcome, SourceDocument, from_pdf, from_text, ingest_document


def ingest_request(request: IngestRequest, store: ChunkStore, embedder: Embedder) -> IngestResult:
    """rag-loop-acceptance §1.1: every document ingested or reported in ``errors``; nothing silently dropped."""
    outcomes: list[IngestOutcome] = []
    errors: list[IngestIssue] = []
    for doc in request.documents:
        try:
            source = from_text(doc.docId, doc.text, doc.title, doc.source, dict(doc.metadata), request.authority)
            outcomes.append(ingest_document(source, store, embedder))
        except ValueError as exc:
            errors.append(IngestIssue(docId=doc.docId, reason=str(exc)))
    for path in request.paths:
        try:
            outcomes.append(ingest_document(from_pdf(Path(path), request.authority), store, embedder))
        except (OSError, UnreadablePdf, ValueError) as exc:
            errors.append(IngestIssue(path=path, reason=str(exc)))
    chunk_ids = [c for o in outcomes for c in o.chunk_ids]
    return IngestResult(
        request_id=request.request_id, trace=list(request.trace), index_version=store.index_version(),
        status="ok",
        outputs=IngestOutputs(ingestedCount=len(outcomes), chunkCount=len(chunk_ids), chunkIds=chunk_ids,
                              collection=request.collection, docIds=[o.doc_id for o in outcomes], errors=errors),
    )


__all__ = ["IngestOutcome", "SourceDocument", "UnreadablePdf", "from_pdf", "from_text", "ingest_document",
           "ingest_request"]
