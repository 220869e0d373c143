"""The topic registry: one table of name → partitions → key → value model.

Agents are wired through :func:`spec`, so an agent that reads or writes a
record model other than its topic's is refused at import time.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import BaseModel

from ..models import (
    ClaimVerifyRequest, ClaimVerifyResult, ComplianceReportRecord, ComplianceRequest, DeadLetter,
    FactsRecord, FallbackRateAlert, GenerationRecord, IngestRequest, IngestResult, PromptRecord,
    QuestionEvent, RelevantFactsRecord, ValidatedAnswer,
)
from ..models.common import Sealed


log = logging.getLogger("citestream.topics")
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


RETENTION = "retention.ms"


def retention_ms(hours: float) -> str:
    """Kafka's ``retention.ms`` for ``hours`` (``CITESTREAM_TOPIC_RETENTION_HOURS``); 0 hours = forever (-1)."""
    return "-1" if hours == 0 else str(round(hours * 3_600_000))


def create_topics(bootstrap_servers: str, prefix: str = "", replication: int = 1, override: int | None = None,
                  retention_hours: float | None = None, **security) -> list[str]:
    """Create every registered topic that does not exist yet; returns the names created. An existing topic keeps
    its partitions (the broker cannot take partitions away, and adding some would move keys between them).

    ``override``: ``partitions``' override. ``retention_hours``: how long the broker keeps records, set on the new
    topics and changed on existing ones that keep them for another time (None: the broker's default, untouched).
    ``security``: the SASL keyword arguments of ``Settings.kafka_security()``.
    """
    from kafka.admin import KafkaAdminClient, NewTopic

    configs = {} if retention_hours is None else {RETENTION: retention_ms(retention_hours)}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, client_id="citestream-admin", **security)
    try:
        existing = set(admin.list_topics())
        ours = [prefix + t.name for t in REGISTRY.values()]
        wanted = [
            NewTopic(name, num_partitions=partitions(t.name, override), replication_factor=replication,
                     topic_configs=configs)
            for name, t in zip(ours, REGISTRY.values())
            if name not in existing
        ]
        if wanted:
            admin.create_topics(wanted)
        if configs:
            _set_configs(admin, [name for name in ours if name in existing], configs)
        return [t.name for t in wanted]
    finally:
        admin.close()


def _described(admin, names: list[str]) -> dict[str, dict[str, str]]:
    """The broker's configuration of each topic of ``names`` (name → key → value), in one request."""
    from kafka.admin import ConfigResource, ConfigResourceType

    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name) for name in names])
    topics = described.get("topic", {})
    return {name: {key: entry["value"] for key, entry in topics.get(name, {}).items()} for name in names}


def _set_configs(admin, names: list[str], configs: dict[str, str]) -> None:
    """``configs`` on the topics ``names`` where they differ (one describe, one alter; keys not named untouched)."""
    from kafka.admin import ConfigResource, ConfigResourceType

    if not names:
        return
    current = _described(admin, names)
    stale = [name for name in names if any(current[name].get(key) != value for key, value in configs.items())]
    if stale:
        result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, name, configs=configs)
                                      for name in stale])
        refused = {name: outcome for name, outcome in result.get("topic", {}).items() if outcome != "OK"}
        if refused:  # a broker that does not let this client alter topics: they keep what they had
            log.warning("the broker kept its own configuration of %s: %s", ", ".join(sorted(refused)), refused)


def topic_configs(bootstrap_servers: str, name: str, **security) -> dict[str, str]:
    """The broker's configuration of topic ``name`` (key → value)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, client_id="citestream-admin", **security)
    try:
        return _described(admin, [name])[name]
    finally:
        admin.close()
