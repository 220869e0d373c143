"""The reconciler on the real broker and Postgres: re-drives questions without an outcome, never answered ones,
and answers a question that cannot be finished as failed instead of leaving it open."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter

from citestream.client import read_topic
from citestream.config import Settings
from citestream.reconcile import Reconciler, run
from citestream.store import RequestTracker

from .reliability_support import make_questions, publish


def _settings(base: Settings, **overrides) -> Settings:
    prefix = f"rec-{uuid.uuid4().hex[:8]}."
    return base.model_copy(update={"topic_prefix": prefix, "app_id": f"citestream-{prefix.strip('.')}",
                                   "reconcile_after_s": 1.0, "reconcile_interval_s": 0.5,
                                   "reconcile_max_redrives": 1, **overrides})


async def _run_for(settings: Settings, seconds: float) -> None:
    try:
        await asyncio.wait_for(run(settings), seconds)
    except asyncio.TimeoutError:
        pass


def test_reconciler_redrives_open_questions_and_never_answered_ones(settings, database, engine):
    from citestream.topics import create_topics

    s = _settings(settings)
    create_topics(s.bootstrap_servers, s.topic_prefix)
    answered, skipped, stuck = make_questions(3, "rec")
    tracker = RequestTracker(engine)
    tracker.mark(answered.request_id, "received", question=answered.question, scope=answered.scope)
    tracker.mark(answered.request_id, "answered")
    tracker.mark(stuck.request_id, "received", question=stuck.question, scope=stuck.scope)
    tracker.mark(stuck.request_id, "retrieved")  # then the flow lost it
    garbage = (b"not-a-question", b"{not json")

    async def scenario():
        from aiokafka import AIOKafkaProducer

        await publish(s, [answered, skipped, stuck])
        producer = AIOKafkaProducer(bootstrap_servers=s.bootstrap_servers)
        await producer.start()
        await producer.send_and_wait(s.topic("questions"), key=garbage[0], value=garbage[1])
        await producer.stop()
        await _run_for(s, 10)

    asyncio.run(scenario())
    messages = asyncio.run(read_topic("questions", settings=s))
    published = Counter(m.key.decode() for m in messages)
    assert published[answered.request_id] == 1, "an answered question was re-driven"
    for q in (skipped, stuck):  # the re-drive goes to the next partition: a stalled one cannot hold it twice
        first, again = sorted((m for m in messages if m.key.decode() == q.request_id), key=lambda m: m.timestamp)
        assert again.partition != first.partition
    assert published[skipped.request_id] == 2 and published[stuck.request_id] == 2
    assert published["not-a-question"] == 1, "an invalid record is the dead-letter's business, not re-driven"

    answers = {m.key.decode(): json.loads(m.value) for m in asyncio.run(read_topic("answers", settings=s))}
    assert answered.request_id not in answers
    for q in (skipped, stuck):  # no worker ran: after the last re-drive they are answered as failed
        assert answers[q.request_id]["validation_status"] == "FAILED"
        assert answers[q.request_id]["failure_reason"].startswith("RECONCILER")
        row = tracker.get(q.request_id)
        assert row["outcome"] == "failed" and row["redrives"] == 1
        assert {"redriven", "failed"} <= row["history"].keys()


def test_restarted_reconciler_resumes_from_the_oldest_open_question(settings, database, engine):
    """Offsets are committed only up to the oldest open question: a restart forgets nothing."""
    from citestream.topics import create_topics

    s = _settings(settings, reconcile_after_s=3600.0)
    create_topics(s.bootstrap_servers, s.topic_prefix)
    first, second = make_questions(2, "resume")
    tracker = RequestTracker(engine)
    tracker.mark(first.request_id, "answered")

    async def scenario():
        await publish(s, [first, second])
        await _run_for(s, 8)  # sees both, closes the first, commits up to the second
        return await _observe_once(s)

    rec = asyncio.run(scenario())
    assert set(rec.open) == {second.request_id}


async def _observe_once(s: Settings) -> Reconciler:
    """A second reconciler of the same group: what it reads back from the committed offsets."""
    from citestream.reconcile import _consumer

    rec = Reconciler(s, RequestTracker.__new__(RequestTracker))
    consumer = await _consumer(s)
    try:
        for _ in range(20):
            for messages in (await consumer.getmany(timeout_ms=500)).values():
                for m in messages:
                    rec.observe(m)
            if rec.open:
                await asyncio.sleep(1)
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    for m in messages:
                        rec.observe(m)
                return rec
    finally:
        await consumer.stop()
    return rec

