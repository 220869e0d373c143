"""Document ingestion: the ingest agent's stage function (rag-loop-acceptance §1.1) and what the CLI reuses.

``request`` (the stage: ``ingest_request``), ``pipeline`` (one document: parse, chunk, embed, store), and the parts
they use (``paths``, ``pdf``, ``layout``, ``chunking``, ``issuer``, ``expiry``, ``runner``).
"""

from ..store.chunks import DocumentOwned
from .paths import PathRefused
from .pdf import UnreadablePdf
from .pipeline import (
    EmbeddingFailed, EmptyDocument, IngestOutcome, SourceDocument, from_pdf, from_text, ingest_document,
)
from .request import DOCUMENT_ERRORS, ingest_request, pdf_paths

__all__ = ["DOCUMENT_ERRORS", "DocumentOwned", "EmbeddingFailed", "EmptyDocument", "IngestOutcome", "PathRefused",
           "SourceDocument", "UnreadablePdf", "from_pdf", "from_text", "ingest_document", "ingest_request", "pdf_paths"]
