"""`qa.facts`: Phase A output (facts only, never an answer) and the GroundingPack shape."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from .agent import AgentError, AgentStatus
from .common import Contract, Name, NoAnswer, QuestionReading, Scope, Sealed, SentenceScores, StampedEnvelope
from .limits import MAX_EVIDENCE_CHARS, MAX_EVIDENCE_CHUNKS, MAX_ID_CHARS, MAX_METADATA_ENTRIES, MAX_QUERY_CHARS

Id = Annotated[str, StringConstraints(max_length=MAX_ID_CHARS)]
Query = Annotated[str, StringConstraints(max_length=4 * MAX_QUERY_CHARS)]  # a question with its acronyms written out


class Fact(Contract):
    """qa-contract-v1 Phase A ``Fact``, plus where it comes from: its document and its parent context.

    The parent (the ~3000-character context a child chunk belongs to) is the
    assembler's knowledge_id, so the per-knowledge cap limits how much of one
    passage fills the prompt, not how much of one document; a fact without a
    parent (an inline document) counts as its document.
    """

    quote: str
    pdf: str = Field(min_length=1)
    page: int = Field(ge=1)
    chunk_id: str = Field(min_length=1)
    score: float = Field(ge=0.0, le=1.0, description="Cosine similarity to the question")
    relevance: float | None = Field(None, ge=0.0, le=1.0,
                                    description="The relevance model's P(this chunk answers the question)")
    doc_id: str = Field(min_length=1)
    section: str | None = None
    authority: str | None = None
    parent_id: str | None = None

    @property
    def knowledge_id(self) -> str:
        return self.parent_id or self.doc_id

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.pdf, self.page, self.chunk_id)


class RetrievalTrace(Contract):
    stages: list[Name] = Field(default_factory=lambda: ["semantic"], max_length=16)
    semantic_k: int | None = None
    bm25_k: int | None = None
    rerank_k: int | None = None
    expansions: list[Query] = Field(default_factory=list, max_length=32,
                                    description="Query variants that were searched")
    lexical_ranker: Name | None = Field(
        None, description="bm25 | bm25_memory | ts_rank_cd, when a lexical list was searched")
    fused_candidates: int | None = Field(None, description="Distinct chunks after Reciprocal Rank Fusion")


class RelevanceTrace(Contract):
    """What the relevance gate saw and decided (policy-qa-design-notes Chain 2)."""

    model: str
    scored: int = Field(ge=0, description="Candidates the model scored")
    best: float | None = Field(None, ge=0.0, le=1.0, description="Best candidate's relevance")
    backstop: float = Field(ge=0.0, le=1.0)
    named_authorities: list[str] = Field(default_factory=list, description="Regulators the question names")
    authorities: list[str] | None = Field(None, description="Authorities searched (None: all)")
    issuers: list[str] = Field(default_factory=list, description="Issuers whose documents were searched besides "
                                                                 "(regulators without a scope of their own)")
    scope_inferred: bool = False


class FactsRecord(StampedEnvelope, Sealed):
    """Key: ``request_id``. Facts are ordered most relevant first (the relevance model's order), else by score."""

    question: str
    scope: Scope
    top_k: int
    facts: list[Fact]
    fallback_used: bool = False
    retrieval_trace: RetrievalTrace
    relevance: RelevanceTrace | None = None
    no_answer: NoAnswer | None = None
    reading: QuestionReading | None = None
    sentence_scores: SentenceScores | None = None


class GroundingChunk(Contract):
    """A passage; a publisher may send its own (``claims.verify``), so each field is capped."""

    chunk_id: Id
    doc_id: Id
    text: str = Field(max_length=MAX_EVIDENCE_CHARS)
    score: float = Field(ge=0.0, le=1.0)
    metadata: dict[Name, Annotated[str, StringConstraints(max_length=1000)] | int | float | None] = Field(
        default_factory=dict, max_length=MAX_METADATA_ENTRIES)


class Citation(Contract):
    chunk_id: Id
    pdf: Id
    page: int = Field(ge=1)


class GroundingPack(Contract):
    """rag-loop-acceptance §1.2: chunks highest score first, one citation per chunk."""

    chunks: list[GroundingChunk] = Field(default_factory=list, max_length=MAX_EVIDENCE_CHUNKS)
    citations: list[Citation] = Field(default_factory=list, max_length=MAX_EVIDENCE_CHUNKS)
    retrieval_trace: RetrievalTrace = Field(default_factory=RetrievalTrace)


class GroundingResult(Contract):
    """What ``retrieval.grounding_pack`` returns: the pack, or a structured error (rag-loop-acceptance §4)."""

    status: AgentStatus
    grounding: GroundingPack | None = None
    error: AgentError | None = None
    total: int = Field(0, ge=0)
    top_k: int = Field(ge=1, le=100)
    fallback_used: bool = False
