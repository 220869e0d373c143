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


def test_the_partition_override_reaches_the_parallel_topics_only():
    from citestream.topics import partitions

    assert partitions("questions") == REGISTRY["questions"].partitions
    assert partitions("questions", 100) == partitions("answers", 100) == 100
    assert partitions("qa.deadletter", 100) == partitions("ops.alerts", 100) == 1  # one ordered log each


def test_readers_find_every_partition_a_topic_was_created_with(settings):
    """Topics made with CITESTREAM_TOPIC_PARTITIONS=6: the broker has 6 partitions, and a reader that reads
    `answers` sees a record on the sixth (the registry says 4)."""
    import asyncio
    import uuid

    from aiokafka import AIOKafkaConsumer
    from kafka import KafkaProducer

    from citestream.ops.client import partitions_of, read_topic
    from citestream.topics import create_topics

    wide = settings.model_copy(update={"topic_prefix": f"wide-{uuid.uuid4().hex[:8]}.", "topic_partitions": 6})
    create_topics(wide.bootstrap_servers, wide.topic_prefix, override=wide.topic_partitions)

    async def counts():
        consumer = AIOKafkaConsumer(bootstrap_servers=wide.bootstrap_servers)
        await consumer.start()
        try:
            both = await partitions_of(consumer, wide, "questions", "qa.deadletter")  # one metadata refresh
            assert [tp.topic for tp in both] == [wide.topic("questions")] * 6 + [wide.topic("qa.deadletter")]
            return {name: len(await partitions_of(consumer, wide, name)) for name in ("questions", "qa.deadletter")}
        finally:
            await consumer.stop()

    assert asyncio.run(counts()) == {"questions": 6, "qa.deadletter": 1}
    producer = KafkaProducer(bootstrap_servers=wide.bootstrap_servers)
    producer.send(wide.topic("answers"), key=b"r-1", value=b"{}", partition=5).get(timeout=30)
    producer.close()
    found = asyncio.run(read_topic("answers", settings=wide))
    assert [(r.partition, r.key) for r in found] == [(5, b"r-1")]


def test_a_reader_starts_where_the_log_now_starts(settings):
    """Retention removes a topic's oldest records, so a partition's log no longer starts at offset 0 (a week-old
    machine's `qa.relevant`). A reader that sought offset 0 there was reset to the end and read nothing."""
    import asyncio
    import uuid

    from aiokafka import TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin.records_to_delete import RecordsToDelete
    from kafka import KafkaProducer

    from citestream.ops.client import read_topic
    from citestream.topics import create_topics

    aged = settings.model_copy(update={"topic_prefix": f"aged-{uuid.uuid4().hex[:8]}."})
    create_topics(aged.bootstrap_servers, aged.topic_prefix)
    producer = KafkaProducer(bootstrap_servers=aged.bootstrap_servers)
    for i in range(4):
        producer.send(aged.topic("ops.alerts"), key=b"r-%d" % i, value=b"{}").get(timeout=30)
    producer.close()

    async def expire_the_first_two():  # what retention does to the oldest segment
        admin = AIOKafkaAdminClient(bootstrap_servers=aged.bootstrap_servers)
        await admin.start()
        try:
            await admin.delete_records({TopicPartition(aged.topic("ops.alerts"), 0): RecordsToDelete(2)})
        finally:
            await admin.close()

    asyncio.run(expire_the_first_two())
    assert [r.key for r in asyncio.run(read_topic("ops.alerts", settings=aged))] == [b"r-2", b"r-3"]
    assert [r.key for r in asyncio.run(read_topic("ops.alerts", since={0: 3}, settings=aged))] == [b"r-3"]


def test_topics_keep_records_for_the_configured_time(settings):
    """New topics get the retention; existing ones are changed when it changes; 0 hours is forever. The embedded
    broker keeps everything otherwise, and its CPU grows with what it keeps (docs/infrastructure.md)."""
    import uuid

    from citestream.topics import create_topics, topic_configs

    prefix = f"kept-{uuid.uuid4().hex[:8]}."
    create_topics(settings.bootstrap_servers, prefix, retention_hours=2)
    assert topic_configs(settings.bootstrap_servers, prefix + "answers")["retention.ms"] == str(2 * 3_600_000)
    assert create_topics(settings.bootstrap_servers, prefix, retention_hours=0.5) == []
    assert {topic_configs(settings.bootstrap_servers, prefix + name)["retention.ms"]
            for name in ("questions", "qa.deadletter")} == {str(1_800_000)}
    create_topics(settings.bootstrap_servers, prefix, retention_hours=0)
    assert topic_configs(settings.bootstrap_servers, prefix + "answers")["retention.ms"] == "-1"
