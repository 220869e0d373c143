"""`questions`: what upstream applications publish."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import Field, field_validator

from .common import Envelope, Scope, utcnow

MAX_QUESTION_CHARS = 2000
_FORBIDDEN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class QuestionEvent(Envelope):
    """A question to answer from the indexed PDFs. Key: ``request_id``."""

    policy_version: str | None = Field(None, description="Left empty by publishers; the worker stamps its own")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    scope: Scope = "MIXED"
    top_k: int = Field(8, description="Clamped to [1, 100]")
    asked_at: datetime = Field(default_factory=utcnow)

    @field_validator("question")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        if _FORBIDDEN_CONTROL.search(value):
            raise ValueError("question contains control characters or null bytes")
        return value

    @field_validator("top_k", mode="before")
    @classmethod
    def _clamp_top_k(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            return min(100, max(1, value))
        return value
