"""`qa.generations`: R3 LLM execution telemetry with the bundle the validator checks against."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .assembly import AnswerBundle
from .common import Contract, NoAnswer, QuestionReading, Scope, Sealed, SentenceScores, StampedEnvelope


class LLMExecutionResult(Contract):
    request_id: str
    model_name: str
    prompt_sha256: str
    generation_status: Literal["OK", "FAILED"]
    raw_model_text: str = ""
    finish_reason: str | None = None
    attempts: int = Field(ge=0)
    llm_latency_ms: float = Field(ge=0)
    prompt_tokens_actual: int | None = None
    completion_tokens_actual: int | None = None
    total_tokens_actual: int | None = None
    error: str | None = None


class GenerationRecord(StampedEnvelope, Sealed):
    """Key: ``request_id``. ``llm`` is empty when the LLM was skipped (NO_EVIDENCE or FAILED assembly)."""

    question: str
    scope: Scope
    generation_status: Literal["OK", "FAILED", "NO_EVIDENCE"]
    answer_bundle: AnswerBundle
    prompt_sha256: str | None = None
    llm: LLMExecutionResult | None = None
    fallback_used: bool = False
    no_answer: NoAnswer | None = None
    reading: QuestionReading | None = None
    sentence_scores: SentenceScores | None = None
