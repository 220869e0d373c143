"""`qa.relevant`: Phase B output, the facts relevant to the question."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .common import Contract, Envelope, Scope
from .retrieval import Fact


class DroppedFact(Contract):
    chunk_id: str
    reason: str


class RelevantFactsRecord(Envelope):
    """Key: ``request_id``. ``facts`` inherit their Phase A scores; at most ``max_context_chunks``."""

    question: str
    scope: Scope
    top_k: int
    facts: list[Fact]
    dropped: list[DroppedFact] = Field(default_factory=list)
    filter_mode: Literal["local", "llm"] = "local"
    filter_fallback_reason: str | None = Field(None, description="Why the LLM filter was replaced by the local one")
    fallback_used: bool = False
