"""`documents.ingest` → `documents.ingested` (rag-loop-acceptance §1.1)."""

from __future__ import annotations

from pydantic import Field

from .agent import AgentError, AgentStatus
from .common import Authority, Contract, Envelope


class InlineDocument(Contract):
    docId: str = Field(min_length=1, max_length=200)
    title: str = ""
    source: str = ""
    text: str
    metadata: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


class IngestRequest(Envelope):
    """Key: ``request_id``. Inline text documents and/or PDF paths readable by the worker."""

    policy_version: str | None = None
    documents: list[InlineDocument] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)
    authority: Authority | None = Field(
        None, description="Authority for every document of this request (else manifest.json, then the rule table)")
    collection: str = "citestream"


class IngestIssue(Contract):
    docId: str | None = None
    path: str | None = None
    reason: str


class IngestedDocument(Contract):
    """Per document: how many pages and chunks, whether it changed, and where its authority came from."""

    docId: str
    pages: int
    chunkCount: int
    changed: bool
    authority: Authority
    authoritySource: str = Field(description="given | manifest | first-page | file-name | unknown")


class IngestOutputs(Contract):
    ingestedCount: int = 0
    chunkCount: int = 0
    chunkIds: list[str] = Field(default_factory=list)
    collection: str
    docIds: list[str] = Field(default_factory=list)
    errors: list[IngestIssue] = Field(default_factory=list)
    warnings: list[IngestIssue] = Field(
        default_factory=list, description="Ingested but worth a look, e.g. authority unknown (stored as MIXED)")
    documents: list[IngestedDocument] = Field(default_factory=list)


class IngestResult(Envelope):
    policy_version: str | None = None
    status: AgentStatus
    outputs: IngestOutputs
    error: AgentError | None = None
