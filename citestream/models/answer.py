"""`answers`: the validated, cited answer downstream consumers read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import Contract, NoAnswerCode, QuestionReading, Scope, Sealed, StampedEnvelope


class AnswerSentence(Contract):
    """One accepted Phase C sentence, its citation markers removed, with the source it is grounded in."""

    n: int = Field(ge=1)
    text: str
    pdf: str
    page: int = Field(ge=1)
    chunk_id: str
    anchor: str
    support: float | None = Field(None, ge=0.0, le=1.0, description="Grounding support in the cited chunk")
    relevance: float | None = Field(None, ge=0.0, le=1.0,
                                    description="The relevance model's P(this sentence answers the question)")


class DroppedSentence(Contract):
    """A Phase C row ``_validate_synthesis`` dropped (recorded, never silent)."""

    index: int = Field(ge=0, description="Position in the model's answer_sentences list")
    reason: Literal["INVALID_ROW", "UNKNOWN_KEY", "DUPLICATE_KEY", "OVER_MAX_SENTENCES", "NOT_ANSWERING",
                    "SLOT_NOT_FILLED"]
    relevance: float | None = Field(None, ge=0.0, le=1.0, description="NOT_ANSWERING: the model's score")


class RelatedClause(Contract):
    """Near-miss (policy-qa-design-notes §3): the closest source sentence, quoted verbatim, that does not answer."""

    text: str
    relevance: float | None = Field(None, ge=0.0, le=1.0, description="The relevance model's score for it")
    pdf: str
    page: int = Field(ge=1)
    chunk_id: str


class ValidatedAnswer(StampedEnvelope, Sealed):
    """Key: ``request_id``. ``answer_text`` is the output text contract: the ANSWER block or the exact refusal.

    The same answer is also carried as fields (``sentences``, ``confidence``,
    ``classification``) so consumers never parse the text.
    """

    question: str
    scope: Scope
    status: Literal["answered", "refused"]
    answer_text: str
    sentences: list[AnswerSentence] = Field(default_factory=list)
    confidence: Literal["High", "Medium", "Low"] | None = None
    classification: Literal["DEFINITIVE", "CONDITIONAL", "REFUSAL"]
    generation_status: Literal["OK", "FAILED", "NO_EVIDENCE"]
    validation_status: Literal["PASSED", "FAILED"]
    failure_reason: str | None = None
    prompt_sha256: str | None = None
    fallback_used: bool = False
    grounding_metrics: dict[str, float] = Field(default_factory=dict)
    dropped_sentences: list[DroppedSentence] = Field(default_factory=list)
    explanation: str | None = Field(None, description="Why a related but insufficient source did not answer")
    related_clause: RelatedClause | None = None
    refusal_code: NoAnswerCode | None = Field(
        None, description="Why a question the stages processed was refused (None: answered, or failed)")
    reading: QuestionReading | None = Field(None, description="How the question was read (typos, acronyms)")
