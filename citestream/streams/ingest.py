"""documents.ingest → ingest (parse, chunk, embed, store atomically) → documents.ingested"""

from ..ingest import ingest_request
from ..models import IngestRequest, IngestResult
from .app import stage_agent
from .deps import Deps


@stage_agent("ingest", source="documents.ingest", sink="documents.ingested")
def ingest_documents(request: IngestRequest, deps: Deps) -> IngestResult:
    return ingest_request(request, deps.chunks, deps.embedder)
