"""`questions`: what upstream applications publish."""

from __future__ import annotations

import json
import re
from datetime import datetime

from pydantic import Field, field_validator

from ..core.hashing import sha256_hex
from .common import Envelope, InputTrace, Name, Scope, utcnow
from .limits import TopK

MAX_QUESTION_CHARS = 2000
_FORBIDDEN_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 and C1 controls, null bytes, and the bidirectional overrides that make text read differently than it is."""


class QuestionEvent(Envelope):
    """A question to answer from the indexed PDFs. Key: ``request_id``."""

    policy_version: Name | None = Field(None, description="Left empty by publishers; the worker stamps its own")
    trace: InputTrace = Field(default_factory=list)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    scope: Scope = "MIXED"
    top_k: TopK = Field(8, description="Any integer (or integer string), clamped to [1, 100]")
    asked_at: datetime = Field(default_factory=utcnow)

    @field_validator("question")
    @classmethod
    def _printable(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        if _FORBIDDEN_CONTROL.search(value):
            raise ValueError("question contains control characters or null bytes")
        return value

    def fingerprint(self) -> str:
        """What makes two copies one question: text, scope and top_k (a re-drive or retry has the same).

        A second record under the same request_id with another fingerprint is a
        different question reusing the id: it is dead-lettered, never answered
        with the first one's answer (``DUPLICATE_REQUEST_ID``).
        """
        material = json.dumps([self.question, self.scope, self.top_k], ensure_ascii=False)
        return sha256_hex(material)
