"""The topic registry: one table of name → partitions → key → value model.

Agents are wired through :func:`spec`, so an agent that reads or writes a
record model other than its topic's is refused at import time.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from ..models import (
    ClaimVerifyRequest, ClaimVerifyResult, ComplianceReportRecord, ComplianceRequest, DeadLetter,
    FactsRecord, FallbackRateAlert, GenerationRecord, IngestRequest, IngestResult, PromptRecord,
    QuestionEvent, RelevantFactsRecord, ValidatedAnswer,
)
from ..models.common import Sealed


KB = 1024
INTERNAL_MAX_BYTES = 900 * KB
"""Below the producer's 1 MB request limit, with room for the key and headers."""


@dataclass(frozen=True)
class TopicSpec:
    name: str
    value_model: type[BaseModel]
    partitions: int
    key: str = "request_id"
    description: str = ""
    max_bytes: int = INTERNAL_MAX_BYTES
    """Largest value accepted: a bigger one is dead-lettered (RECORD_TOO_LARGE) before it is parsed."""

    @property
    def sealed(self) -> bool:
        """Only a worker writes this topic: its records carry a MAC, checked by whoever reads them
        (``citestream.sealing``)."""
        return issubclass(self.value_model, Sealed)


class TopicWiringError(TypeError):
    """An agent was wired to a topic whose record model is not the one it handles."""


REGISTRY: dict[str, TopicSpec] = {
    t.name: t
    for t in [
        TopicSpec("questions", QuestionEvent, 4, description="Questions from upstream applications", max_bytes=64 * KB),
        TopicSpec("qa.facts", FactsRecord, 4, description="Phase A retrieved facts"),
        TopicSpec("qa.relevant", RelevantFactsRecord, 4, description="Phase B relevant facts"),
        TopicSpec("qa.prompts", PromptRecord, 4, description="AnswerBundle + frozen prompt"),
        TopicSpec("qa.generations", GenerationRecord, 4, description="LLM execution results"),
        TopicSpec("answers", ValidatedAnswer, 4, description="Validated, cited answers or the refusal"),
        TopicSpec("qa.deadletter", DeadLetter, 1, description="Records that broke a contract, with reason"),
        TopicSpec("ops.alerts", FallbackRateAlert, 1, description="Fallback-rate alerts"),
        TopicSpec("documents.ingest", IngestRequest, 2, description="Documents to ingest"),
        TopicSpec("documents.ingested", IngestResult, 2, description="Ingest results"),
        TopicSpec("claims.verify", ClaimVerifyRequest, 2, description="Claims to verify", max_bytes=512 * KB),
        TopicSpec("claims.verdicts", ClaimVerifyResult, 2, description="Claim verdicts"),
        TopicSpec("compliance.requests", ComplianceRequest, 2, description="Documents + bound constraints",
                  max_bytes=512 * KB),
        TopicSpec("compliance.reports", ComplianceReportRecord, 2, description="Validated compliance reports"),
    ]
}


def spec(name: str, model: type[BaseModel] | None = None) -> TopicSpec:
    """The registered topic ``name``; if ``model`` is given, it must be the topic's value model."""
    try:
        topic = REGISTRY[name]
    except KeyError:
        raise TopicWiringError(f"unknown topic {name!r}") from None
    if model is not None and topic.value_model is not model:
        raise TopicWiringError(
            f"topic {name!r} carries {topic.value_model.__name__}, not {model.__name__}"
        )
    return topic


def partitions(name: str, override: int | None = None) -> int:
    """How many partitions topic ``name`` is created with: the registry's, or ``override``
    (``CITESTREAM_TOPIC_PARTITIONS``) for a topic a stage reads in parallel. A single-partition topic (dead letters,
    alerts) stays single: its readers see one ordered log."""
    count = spec(name).partitions
    return override if override and count > 1 else count
