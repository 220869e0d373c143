"""A consumer group whose leader is slow to assign settles on the real broker: no ghost member holds it.

The leader's offset commit races the rebalance a second member starts and gets ILLEGAL_GENERATION. aiokafka alone
then rejoins as a new member and the embedded broker keeps the old one forever, elected leader, never syncing: the
group sat in CompletingRebalance until this test's deadline (docs/reliability.md). With ``member_id`` applied
(as every worker, reconciler and page applies it) the group is Stable with its two members and every partition.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.protocol.commit import OffsetCommitResponse_v2
from aiokafka.protocol.group import HeartbeatResponse_v1

from citestream.streams import member_id

LEADER_ASSIGNS_S = 3.0  # a busy worker's assignor: long enough for its auto-commit to meet the next rebalance
SETTLE_S = 30.0


class SlowAssignor(RoundRobinPartitionAssignor):
    name = "roundrobin"

    @classmethod
    def assign(cls, cluster, members):
        time.sleep(LEADER_ASSIGNS_S)  # blocks only the leader's own loop, in its own thread
        return super().assign(cluster, members)


def _member(settings, topic: str, start_after_s: float, seen: dict) -> None:
    async def run():
        await asyncio.sleep(start_after_s)
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=settings.bootstrap_servers, group_id=topic,
                                    partition_assignment_strategy=[SlowAssignor], session_timeout_ms=10_000,
                                    heartbeat_interval_ms=1000, auto_commit_interval_ms=500,
                                    **settings.kafka_security())
        await consumer.start()
        try:
            deadline = time.monotonic() + SETTLE_S
            while time.monotonic() < deadline and not seen.get("settled"):
                await consumer.getmany(timeout_ms=500)
                seen[start_after_s] = sorted(tp.partition for tp in consumer.assignment())
        finally:
            await asyncio.wait_for(consumer.stop(), 10)

    asyncio.run(run())


def _settle(settings, topic: str) -> dict:
    async def create():
        admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers, **settings.kafka_security())
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 4, 1)])
        finally:
            await admin.close()

    asyncio.run(create())
    seen: dict = {}
    members = [threading.Thread(target=_member, args=(settings, topic, delay, seen)) for delay in (0.0, 4.0)]
    for thread in members:
        thread.start()
    deadline = time.monotonic() + SETTLE_S + 15
    while time.monotonic() < deadline and any(t.is_alive() for t in members):
        if sorted(seen.get(0.0, []) + seen.get(4.0, [])) == [0, 1, 2, 3] and seen.get(0.0) and seen.get(4.0):
            seen["settled"] = time.monotonic()
        time.sleep(0.5)
    for thread in members:
        thread.join()
    return seen


def test_a_slow_leader_and_a_second_member_settle_into_one_stable_group(settings):
    member_id.apply()
    seen = _settle(settings, f"{settings.topic_prefix}member-id-{uuid.uuid4().hex[:8]}")
    assert seen.get("settled"), f"the two members never shared the 4 partitions: {seen}"


def test_a_stale_generation_keeps_the_member_id_and_an_unknown_member_does_not():
    stale = member_id.error_codes(OffsetCommitResponse_v2([("questions", [(0, 0), (1, 22)])]))
    unknown = member_id.error_codes(HeartbeatResponse_v1(0, 25))
    assert stale == {22} and member_id.keeps_member_id(stale)
    assert unknown == {25} and not member_id.keeps_member_id(unknown)
    assert not member_id.keeps_member_id(set())  # no answer to go by: aiokafka's own reset
