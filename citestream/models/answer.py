"""`answers`: the validated, cited answer downstream consumers read."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import Contract, Envelope, Scope


class AnswerSentence(Contract):
    n: int = Field(ge=1)
    text: str
    pdf: str
    page: int = Field(ge=1)
    chunk_id: str
    anchor: str


class ValidatedAnswer(Envelope):
    """Key: ``request_id``. ``answer_text`` is the output text contract: the ANSWER block or the exact refusal."""

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
