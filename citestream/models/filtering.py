"""`qa.relevant`: Phase B output, the facts relevant to the question."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .common import Contract, NoAnswer, QuestionReading, Scope, Sealed, SentenceScores, StampedEnvelope
from .retrieval import Fact

DropReason = Literal[
    "ARTIFACT",             # header, footer, line-number run, table of contents
    "NO_TERM_OVERLAP",      # shares no content term with the question
    "OFF_TOPIC",            # shares only generic terms, none of the question's specific ones
    "DUPLICATE",            # same normalised similarity key as a better fact
    "MAX_CONTEXT_CHUNKS",   # beyond qa-contract max_context_chunks
    "NOT_SELECTED_BY_LLM",  # LLM mode: the model did not list it
    "NOT_RELEVANT",         # the relevance model's score is below the fact floor
]


class DroppedFact(Contract):
    chunk_id: str
    reason: DropReason


class RelevantFactsRecord(StampedEnvelope, Sealed):
    """Key: ``request_id``. ``facts`` inherit their Phase A scores and order; at most ``max_context_chunks``.

    ``no_evidence`` is the explicit "nothing relevant" the assembler needs before
    it may treat an empty bundle as NO_EVIDENCE (R2.0A); empty facts without it
    are a contract break and fail assembly.
    """

    question: str
    scope: Scope
    top_k: int
    facts: list[Fact]
    dropped: list[DroppedFact] = Field(default_factory=list)
    no_evidence: bool = False
    filter_mode: Literal["local", "llm"] = "local"
    filter_fallback_reason: str | None = Field(None, description="Why the LLM filter was replaced by the local one")
    llm_rows_rejected: int = Field(0, ge=0, description="LLM mode: rows _validate_relevant_facts dropped")
    fallback_used: bool = False
    no_answer: NoAnswer | None = None
    reading: QuestionReading | None = None
    sentence_scores: SentenceScores | None = None

    @model_validator(mode="after")
    def _no_evidence_means_empty(self) -> RelevantFactsRecord:
        if self.no_evidence and self.facts:
            raise ValueError("no_evidence is only for an empty fact list")
        if self.filter_fallback_reason and self.filter_mode != "local":
            raise ValueError("a filter fallback means the local filter produced the facts")
        return self
