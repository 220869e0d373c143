"""An idle consumer against the real broker: empty fetches are paced, a record published meanwhile still arrives."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from citestream.streams import idle_fetch

IDLE_S = 2.0
CYCLE_S = 0.25


async def _idle_then_one_record(settings, topic: str) -> tuple[int, list[bytes]]:
    fetches = 0
    original = idle_fetch._original

    async def counted(self, assignment, node_id, request):
        nonlocal fetches
        fetches += 1
        return await original(self, assignment, node_id, request)

    idle_fetch._original = counted
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, enable_auto_commit=False,
                                **settings.kafka_security())
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, **settings.kafka_security())
    await consumer.start()
    await producer.start()
    try:
        tp = TopicPartition(settings.topic(topic), 0)
        consumer.assign([tp])
        await consumer.seek_to_end(tp)
        await consumer.position(tp)
        fetches = 0
        idle = await consumer.getmany(timeout_ms=int(IDLE_S * 1000))
        assert not idle
        idle_fetches = fetches
        await producer.send_and_wait(tp.topic, b"after the idle time", partition=0)
        got = await consumer.getmany(timeout_ms=10_000)
        return idle_fetches, [r.value for batch in got.values() for r in batch]
    finally:
        idle_fetch._original = original
        await producer.stop()
        await consumer.stop()


def test_an_idle_consumer_fetches_a_few_times_a_second_and_still_gets_the_next_record(settings, topics):
    idle_fetch.apply(CYCLE_S)
    try:
        fetches, values = asyncio.run(_idle_then_one_record(settings, "ops.alerts"))
    finally:
        idle_fetch.apply(settings.broker_idle_fetch_ms / 1000)
    assert fetches <= IDLE_S / CYCLE_S + 2, fetches  # unpaced, the embedded broker answers hundreds a second
    assert values == [b"after the idle time"]
