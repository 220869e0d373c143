"""The registry refuses an agent wired to the wrong record model."""

import pytest

from citestream.models import FactsRecord, QuestionEvent
from citestream.topics import REGISTRY, TopicWiringError, spec

EXPECTED_TOPICS = {
    "questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "answers", "qa.deadletter",
    "ops.alerts", "documents.ingest", "documents.ingested", "claims.verify", "claims.verdicts",
    "compliance.requests", "compliance.reports",
}


def test_registry_lists_every_topic():
    assert set(REGISTRY) == EXPECTED_TOPICS
    assert all(t.key == "request_id" and t.partitions >= 1 for t in REGISTRY.values())


def test_spec_checks_the_model():
    assert spec("questions", QuestionEvent).value_model is QuestionEvent
    with pytest.raises(TopicWiringError):
        spec("questions", FactsRecord)
    with pytest.raises(TopicWiringError):
        spec("no.such.topic")


def test_topics_create_is_idempotent(settings):
    from citestream.topics import create_topics

    create_topics(settings.bootstrap_servers, settings.topic_prefix)
    assert create_topics(settings.bootstrap_servers, settings.topic_prefix) == []
