"""`documents.ingest` → `documents.ingested` (rag-loop-acceptance §1.1)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, field_validator, model_validator

from .agent import AgentError, AgentStatus
from .common import Authority, Contract, Envelope, InputTrace, Issuer, Name, Sealed
from .limits import (
    MAX_DOCUMENT_CHARS, MAX_INLINE_BYTES, MAX_INLINE_DOCUMENTS, MAX_METADATA_ENTRIES, MAX_NAME_CHARS, MAX_PATH_CHARS,
    MAX_PATHS,
)

_Short = Annotated[str, StringConstraints(max_length=1000)]


class InlineDocument(Contract):
    docId: str = Field(
        min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="Letters, digits, '.', '_' and '-' (no ':', so never an upload's 'upload:<name>'; no control, "
                    "space or direction characters), not ending in '.pdf' (never cited like a file); a file of an "
                    "ingest root with this id replaces the inline document")
    title: str = Field("", max_length=1000)
    source: str = Field("", max_length=1000)
    text: str = Field(max_length=MAX_DOCUMENT_CHARS)
    metadata: dict[Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)], _Short | int | float | bool | None] = (
        Field(default_factory=dict, max_length=MAX_METADATA_ENTRIES))

    @field_validator("docId")
    @classmethod
    def _not_a_file_name(cls, doc_id: str) -> str:
        if doc_id.lower().endswith(".pdf"):
            raise ValueError("an inline docId may not end in '.pdf': a citation would read like the file's")
        return doc_id


class IngestRequest(Envelope):
    """Key: ``request_id``. Inline text documents and/or PDF paths inside the worker's ingest roots.

    Paths outside ``CITESTREAM_INGEST_ROOTS`` are refused (see ``ingest.paths``);
    the counts and sizes here are bounded so one request cannot exhaust a worker.
    """

    policy_version: Name | None = None
    trace: InputTrace = Field(default_factory=list)
    documents: list[InlineDocument] = Field(default_factory=list, max_length=MAX_INLINE_DOCUMENTS)
    paths: list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATH_CHARS)]] = Field(
        default_factory=list, max_length=MAX_PATHS)
    authority: Authority | None = Field(
        None, description="Authority for the PDFs of this request that the operator's manifest.json does not name "
                          "(else what the document says of its issuer); uploads and inline documents are MIXED "
                          "whatever it says")
    issuer: Issuer | None = Field(
        None, description="Issuer of this request's PDFs where the operator's manifest names none (a gazetteer name, "
                          "citestream.core.regulators); its scope follows unless `authority` is given. For an upload, "
                          "the uploader's correction: the issuer is taken, the scope stays MIXED")
    collection: Name = "citestream"

    @model_validator(mode="after")
    def _inline_bytes(self) -> IngestRequest:
        size = sum(len(d.text.encode("utf-8")) for d in self.documents)
        if size > MAX_INLINE_BYTES:
            raise ValueError(f"inline documents hold {size} bytes of text; at most {MAX_INLINE_BYTES} per request")
        return self


class IngestIssue(Contract):
    docId: str | None = None
    path: str | None = None
    reason: str


class IngestedDocument(Contract):
    """Per document: how many pages and chunks, whether it changed, its issuer and scope, and where they came from."""

    docId: str
    pages: int
    chunkCount: int
    changed: bool
    authority: Authority
    authoritySource: str = Field(description="where the issuer and scope came from: given | manifest | request | "
                                             "uploader | first-page | second-page | metadata | file-name | unknown")
    origin: str = Field("", description="Who owns it, and alone may replace it: root:<folder> | upload | inline | cli")
    issuer: str = Field("", description="Who issued it (a gazetteer name, citestream.core.regulators); '' unknown")
    issuerEvidence: str = Field("", description="The words the issuer was read from, when it was read")


class IngestOutputs(Contract):
    ingestedCount: int = 0
    chunkCount: int = 0
    chunkIds: list[str] = Field(default_factory=list)
    collection: str
    docIds: list[str] = Field(default_factory=list)
    errors: list[IngestIssue] = Field(default_factory=list)
    warnings: list[IngestIssue] = Field(
        default_factory=list, description="Ingested but worth a look: an issuer unknown (stored as MIXED), two issuers "
                                          "named, a manifest the document contradicts")
    documents: list[IngestedDocument] = Field(default_factory=list)


class IngestResult(Envelope, Sealed):
    policy_version: Name | None = None
    status: AgentStatus
    outputs: IngestOutputs
    error: AgentError | None = None
