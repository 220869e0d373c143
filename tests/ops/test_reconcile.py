"""The reconciler on the real broker and Postgres: re-drives questions without an outcome, never answered ones,
and answers a question that cannot be finished as failed instead of leaving it open."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import Counter

from citestream.ops.client import read_topic
from citestream.config import Settings
from citestream.ops.reconcile import OpenQuestion, Reconciler, run
from citestream.topics import spec
from citestream.store import RequestTracker

from tests.support.reliability import make_questions, publish


def _settings(base: Settings, **overrides) -> Settings:
    prefix = f"rec-{uuid.uuid4().hex[:8]}."
    return base.model_copy(update={"topic_prefix": prefix, "app_id": f"citestream-{prefix.strip('.')}",
                                   "reconcile_after_s": 1.0, "reconcile_interval_s": 0.5,
                                   "reconcile_max_redrives": 1, **overrides})


async def _run_for(settings: Settings, seconds: float) -> None:
    try:
        await asyncio.wait_for(run(settings), seconds)
    except TimeoutError:
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


def _padded_past_the_cap(question) -> bytes:
    """A valid question in more bytes than `questions` takes: the intake dead-letters it RECORD_TOO_LARGE."""
    body = question.model_dump_json().encode()
    return b"{" + b" " * (spec("questions").max_bytes + 1 - len(body)) + body[1:]


def _with_a_repeated_key(question) -> bytes:
    """A valid question that names its text twice: the intake dead-letters it DECODE_ERROR (pydantic alone takes
    the last)."""
    return question.model_dump_json().encode()[:-1] + b', "question": "What else does the record say?"}'


def test_reconciler_never_tracks_redrives_or_answers_a_record_the_intake_refuses(settings, database, engine):
    """Issue 54 M3: the reconciler reads `questions` as the intake does (byte cap, strict JSON): a record the
    intake dead-letters is never held, re-published or answered as failed; a valid one beside it still is."""
    from aiokafka import AIOKafkaProducer

    from citestream.topics import create_topics

    s = _settings(settings)
    create_topics(s.bootstrap_servers, s.topic_prefix)
    stuck, oversized, repeated = make_questions(3, "refused")
    records = {oversized.request_id: _padded_past_the_cap(oversized),
               repeated.request_id: _with_a_repeated_key(repeated)}

    async def scenario():
        await publish(s, [stuck])
        producer = AIOKafkaProducer(bootstrap_servers=s.bootstrap_servers)
        await producer.start()
        for rid, value in records.items():
            await producer.send_and_wait(s.topic("questions"), key=rid.encode(), value=value)
        await producer.stop()
        await _run_for(s, 10)

    asyncio.run(scenario())
    published = Counter(m.key.decode() for m in asyncio.run(read_topic("questions", settings=s)))
    answers = {m.key.decode() for m in asyncio.run(read_topic("answers", settings=s))}
    assert published[stuck.request_id] == 2 and stuck.request_id in answers, "the valid question was not re-driven"
    for rid in records:
        assert published[rid] == 1, "a record the intake refuses was re-driven"
        assert rid not in answers, "a record the intake refuses was answered as failed"
        assert RequestTracker(engine).get(rid) is None


class _Watched(Reconciler):
    """A reconciler that notes the most questions it ever held open at once."""

    most_open = 0

    def observe(self, message) -> None:
        super().observe(message)
        self.most_open = max(self.most_open, len(self.open))


def test_reconciler_holds_at_most_max_open_questions_and_still_ends_every_one(settings, database, engine):
    """Issue 54 M3: the open questions the reconciler holds are capped; when full it stops reading `questions`
    (its offsets stay behind the oldest open one), so the questions past the cap wait on the broker, not in memory,
    and are reconciled once earlier ones close."""
    from citestream.topics import create_topics

    s = _settings(settings)
    create_topics(s.bootstrap_servers, s.topic_prefix)
    questions = make_questions(5, "capped")
    rec = _Watched(s, RequestTracker(engine), max_open=2)

    async def scenario():
        await publish(s, questions)
        await asyncio.wait_for(run(s, once_idle_s=3, reconciler=rec), 90)

    asyncio.run(scenario())
    assert 0 < rec.most_open <= 2, f"held {rec.most_open} questions open at once with room for 2"
    answers = {m.key.decode(): json.loads(m.value) for m in asyncio.run(read_topic("answers", settings=s))}
    for q in questions:  # no worker ran: every one, past the cap too, ends answered as failed
        assert answers[q.request_id]["failure_reason"].startswith("RECONCILER")
    assert rec.failed == len(questions)


def test_a_question_published_again_and_again_holds_a_bounded_list_of_offsets(settings, database, engine):
    """Each copy of an open question is noted for the commit and the re-drive, but only its first offset per
    partition and the latest copy's are needed: a publisher repeating one question cannot grow what is held."""
    from citestream.ops.reconcile import _consumer
    from citestream.topics import create_topics

    s = _settings(settings, reconcile_after_s=3600.0)
    create_topics(s.bootstrap_servers, s.topic_prefix)
    (question,) = make_questions(1, "repeated")
    copies = 200

    async def scenario() -> tuple[Reconciler, list]:
        await publish(s, [question] * copies)
        rec, consumer, seen = Reconciler(s, RequestTracker(engine)), await _consumer(s), []
        deadline = time.monotonic() + 60
        try:
            while len(seen) < copies and time.monotonic() < deadline:
                for messages in (await consumer.getmany(timeout_ms=500)).values():
                    for message in messages:
                        rec.observe(message)
                        seen.append(message)
        finally:
            await consumer.stop()
        return rec, seen

    rec, seen = asyncio.run(scenario())
    offsets = [(tp.partition, offset) for tp, offset in rec.open[question.request_id].offsets]
    by_partition = {m.partition: m.offset for m in reversed(seen)}  # the first copy's offset in each partition
    assert len(offsets) <= len(by_partition) + 1, f"{len(offsets)} offsets held for one question"
    assert offsets[-1] == (seen[-1].partition, seen[-1].offset), "the latest copy decides whether it is queued"
    assert {tp.partition: o for tp, o in rec.commit_offsets().items()} == by_partition


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


def test_queued_questions_are_left_alone_until_the_workers_idle_beside_them(settings, database, engine):
    """Queued is not lost, but a partition no worker fetches must not hold a question forever."""
    from aiokafka import TopicPartition

    s = _settings(settings, reconcile_after_s=60.0)
    (question,) = make_questions(1, "queued")
    tp = TopicPartition(s.topic("questions"), 0)
    start = 1_000_000.0

    def reconciler() -> Reconciler:
        rec = Reconciler(s, RequestTracker(engine), last_activity=start)
        rec.open[question.request_id] = OpenQuestion(question.request_id.encode(), b"{}", question,
                                                     seen_at=start, offsets=[(tp, 5)])
        return rec

    def redriven(rec: Reconciler, at: float, consumed: int, workers_present: bool = True, elsewhere: int = 0) -> bool:
        offsets = {tp: consumed, TopicPartition(tp.topic, 1): elsewhere}
        redrive, give_up = rec.sweep(start + at, offsets, workers_present)
        return [e.question.request_id for e in redrive + give_up] == [question.request_id]

    rec = reconciler()
    assert not redriven(rec, 30, 3), "young and queued"
    assert not redriven(rec, 80, 3), "the group's offset was last seen moving at 30 s: 50 s idle is not a stall"
    assert redriven(rec, 91, 3), "no offset moved and no question progressed for reconcile_after_s"

    rec = reconciler()
    for at in range(0, 600, 50):  # a group that keeps consuming another partition is busy, not stalled
        assert not redriven(rec, at, 3, elsewhere=at)

    rec = reconciler()
    redriven(rec, 0, 3)
    assert not redriven(rec, 600, 3, workers_present=False), "no workers at all: queued, waiting for them"


async def _observe_once(s: Settings) -> Reconciler:
    """A second reconciler of the same group: what it reads back from the committed offsets."""
    from citestream.ops.reconcile import _consumer

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

