"""The one small interface every generation backend implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class LLMReply:
    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class TransientLLMError(Exception):
    """Worth retrying with the same prompt bytes: timeouts, 429, 5xx, dropped connections."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class LLMError(Exception):
    """Not worth retrying: bad request, auth, a model that does not exist."""


class LLMBackend(Protocol):
    model_name: str

    def complete(self, prompt_text: str) -> LLMReply:
        """Send the exact prompt text; return the raw model text. Never edits the prompt or the reply."""
        ...
