"""The reconciler: every valid question on `questions` ends with an outcome, even when the stream layer drops it.

faust has been seen to skip 1–5 messages after a restart (../shared/INFRA.md),
so the flow does not trust it alone. The reconciler reads `questions` with its
own consumer group, remembers every valid question that has no outcome in the
``requests`` table yet, and after ``reconcile_after_s`` without progress
re-publishes the original bytes under the same key, on the next partition each
time: a partition that stops being fetched after a rebalance (seen with faust
in the rolling-restart fault test, until the next rebalance) must not hold the
copy too. A question that already has an outcome is never re-published (and
the retrieve agent skips it anyway).
After ``reconcile_max_redrives`` re-drives the question is answered with the
failure refusal, so nothing waits forever. Offsets are committed only up to
the oldest question still open, so a restarted reconciler forgets nothing.

It reads `questions` exactly as the intake does (``streams.intake``: the byte
cap of `questions`, the strict decoder, the contract): a record the intake
dead-letters already has its outcome, so it is never held, re-driven or
answered here (issue 54, M3). What it holds is bounded: at most
``MAX_OPEN_QUESTIONS`` questions, each at most the cap of `questions`, with at
most one offset per partition plus one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from .. import metrics
from ..config import Settings, get_settings
from ..models import QuestionEvent
from ..refusals import failure_answer
from ..sealing import RecordSealer
from ..store import RequestTracker, engine_for
from ..streams import member_id
from ..streams.intake import RecordRejected, check_size, decode_json, parse
from ..topics import spec

log = logging.getLogger("citestream.ops.reconcile")

MAX_OPEN_QUESTIONS = 500
"""Questions the reconciler holds open at once: at most 500 × 64 kB of record bytes (~32 MB) whatever is published.
When full it stops reading `questions` until some close (``room``); its committed offsets stay behind the oldest
open question, so the rest wait on the broker, not in memory, and are reconciled later, never dropped. Meanwhile
the workers answer or dead-letter them as always, and an open question closes once it has an outcome: at the
latest when it is answered as failed after its re-drives."""

QUESTIONS = spec("questions", QuestionEvent)


def intake_question(value: bytes | None) -> QuestionEvent:
    """The question the intake would take from these bytes, or the ``RecordRejected`` it dead-letters them with:
    the same cap, decoder and contract (``streams.faust_app``), so both agree on what is a question."""
    data = decode_json(check_size(value, QUESTIONS.max_bytes, QUESTIONS.name))
    return cast(QuestionEvent, parse(QuestionEvent, data))


@dataclass
class OpenQuestion:
    key: bytes
    value: bytes
    question: QuestionEvent
    seen_at: float  # wall-clock seconds when it was published
    offsets: list[tuple[TopicPartition, int]] = field(default_factory=list)

    def note_copy(self, tp: TopicPartition, offset: int) -> None:
        """Keep the first copy's offset in each partition (what may be committed, where re-drives start) and the
        latest copy's (whether it is still queued); a middle one is dropped, so a publisher repeating the question
        cannot grow the list past one per partition plus one."""
        if len(self.offsets) > 1 and self.offsets[-1][0] in {t for t, _ in self.offsets[:-1]}:
            self.offsets.pop()
        self.offsets.append((tp, offset))


@dataclass
class Reconciler:
    """Plain state + two steps (``observe`` a message, ``sweep`` the open questions), driven by ``run``."""

    settings: Settings
    tracker: RequestTracker
    open: dict[str, OpenQuestion] = field(default_factory=dict)
    next_offset: dict[TopicPartition, int] = field(default_factory=dict)
    redriven: int = 0
    failed: int = 0
    last_activity: float = field(default_factory=time.time)  # when the workers were last seen doing anything
    last_consumed: dict[TopicPartition, int] = field(default_factory=dict)
    max_open: int = MAX_OPEN_QUESTIONS

    @cached_property
    def sealer(self) -> RecordSealer:
        """Seals the failure answers it writes, like a stage's (``sealing``)."""
        return RecordSealer.from_file(self.settings.record_key_path, create=True)

    def room(self) -> int:
        """How many more records it may read now: each can open one question, so ``open`` stays ≤ ``max_open``."""
        return max(0, self.max_open - len(self.open))

    def observe(self, message) -> None:
        tp = TopicPartition(message.topic, message.partition)
        self.next_offset[tp] = message.offset + 1
        try:
            question = intake_question(message.value)
        except RecordRejected:
            return  # dead-lettered by the retrieve agent: its outcome is the dead-letter record
        if message.key is not None and message.key.decode("utf-8", "replace") != question.request_id:
            return  # a key that differs from the record's id is not a question we can account for
        rid = question.request_id
        entry = self.open.get(rid)
        if entry is not None and entry.question.fingerprint() != question.fingerprint():
            return  # another question reusing the id: dead-lettered (DUPLICATE_REQUEST_ID), not ours to re-drive
        if entry is None:
            entry = self.open[rid] = OpenQuestion(message.key or rid.encode(), message.value, question,
                                                  message.timestamp / 1000 if message.timestamp else time.time())
        entry.note_copy(tp, message.offset)

    def commit_offsets(self) -> dict[TopicPartition, int]:
        """Per partition: the oldest offset still open, or everything read."""
        commit = dict(self.next_offset)
        for entry in self.open.values():
            for tp, offset in entry.offsets:
                commit[tp] = min(commit.get(tp, offset), offset)
        return commit

    def sweep(self, now: float | None = None, consumed: dict[TopicPartition, int] | None = None,
              workers_present: bool = True) -> tuple[list[OpenQuestion], list[OpenQuestion]]:
        """Close answered questions; return (to re-drive, to answer as failed) among the overdue ones.

        ``consumed`` is the worker group's committed offset per partition: a question the workers have not
        reached yet is queued and left alone, unless the group has members that have done nothing (no offset
        moved, no question progressed) for ``reconcile_after_s``: then its partition is not being fetched.
        """
        now = time.time() if now is None else now
        consumed = consumed or {}
        after = self.settings.reconcile_after_s
        if consumed != self.last_consumed:
            self.last_consumed, self.last_activity = dict(consumed), now
        known = self.tracker.outcomes(list(self.open))
        for rid in list(self.open):
            row = known.get(rid)
            if row and row["outcome"]:
                del self.open[rid]
                self.last_activity = now
            elif row:
                self.last_activity = max(self.last_activity, row["updated_at"].timestamp())
        queue_stalled = workers_present and now - self.last_activity >= after
        redrive, give_up = [], []
        for rid, entry in self.open.items():
            row = known.get(rid)
            queued = any(tp in consumed and offset >= consumed[tp] for tp, offset in entry.offsets[-1:])
            if queued and not queue_stalled:
                continue
            last_progress = max(entry.seen_at, row["updated_at"].timestamp() if row else 0.0)
            if now - last_progress < after:
                continue
            if row and row["redrives"] >= self.settings.reconcile_max_redrives:
                give_up.append(entry)
            else:
                redrive.append(entry)
        metrics.PENDING.set(len(self.open))
        return redrive, give_up


async def _consumer(settings: Settings) -> AIOKafkaConsumer:
    member_id.apply()  # a group member: never leave a ghost of itself on a broker that keeps sessions forever
    consumer = AIOKafkaConsumer(
        settings.topic("questions"), bootstrap_servers=settings.bootstrap_servers,
        group_id=f"{settings.app_id}-reconciler", enable_auto_commit=False, auto_offset_reset="earliest",
        session_timeout_ms=int(settings.broker_session_timeout_s * 1000), heartbeat_interval_ms=1000,
        **settings.kafka_security(),
    )
    await consumer.start()
    return consumer


async def _read(consumer: AIOKafkaConsumer, rec: Reconciler) -> list:
    """At most ``rec.room()`` records. While the reconciler is full its partitions are paused but still polled:
    a consumer that stops polling for ``max.poll.interval`` is put out of its group."""
    room, assigned = rec.room(), consumer.assignment()
    if room:
        consumer.resume(*assigned)
    elif assigned - consumer.paused():
        log.warning("reconciler holds %d open questions, its cap: reading questions paused until some close",
                    len(rec.open))
        consumer.pause(*assigned)
    batches = await consumer.getmany(timeout_ms=1000, max_records=min(room, 2000) or 1)
    if not room:
        _put_back(consumer, batches)
        return []
    return [message for messages in batches.values() for message in messages]


def _put_back(consumer: AIOKafkaConsumer, batches: dict) -> None:
    """Records read while full (from a partition assigned since the pause) are read again once there is room."""
    for tp, messages in batches.items():
        consumer.seek(tp, messages[0].offset)
        consumer.pause(tp)


async def run(settings: Settings | None = None, *, once_idle_s: float | None = None,
              reconciler: Reconciler | None = None) -> Reconciler:
    """Reconcile forever (or, with ``once_idle_s``, until nothing is open and no message came for that long)."""
    settings = settings or get_settings()
    rec = reconciler or Reconciler(settings, RequestTracker(engine_for(settings.app_dsn)))
    consumer = await _consumer(settings)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all", **settings.kafka_security())
    await producer.start()
    log.info("reconciler started: re-drive after %.0fs without progress, at most %d times",
             settings.reconcile_after_s, settings.reconcile_max_redrives)
    last_sweep = last_message = time.monotonic()
    try:
        while True:
            messages = await _read(consumer, rec)
            for message in messages:
                rec.observe(message)
            if messages or not rec.room():  # held back is not idle: records may be waiting
                last_message = time.monotonic()
            if time.monotonic() - last_sweep >= settings.reconcile_interval_s:
                last_sweep = time.monotonic()
                await _sweep(rec, producer, consumer)
                if once_idle_s is not None and not rec.open and time.monotonic() - last_message > once_idle_s:
                    return rec
    finally:
        await producer.stop()
        await consumer.stop()


async def _worker_group(settings: Settings) -> tuple[dict[TopicPartition, int], bool]:
    """The worker group's committed offsets on `questions` (empty when unknown) and whether it has members."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=settings.bootstrap_servers, **settings.kafka_security())
    try:
        await admin.start()
        offsets = await admin.list_consumer_group_offsets(settings.app_id)
        described = await admin.describe_consumer_groups([settings.app_id])
        members = any(group["members"] for response in described for group in response.to_object()["groups"])
        return {tp: meta.offset for tp, meta in offsets.items()
                if tp.topic == settings.topic("questions") and meta.offset >= 0}, members
    except Exception as exc:  # an older broker or a transient error: fall back to time alone
        log.debug("worker group offsets unavailable: %s", exc)
        return {}, False
    finally:
        await admin.close()


def redrive_partition(entry: OpenQuestion, count: int, partitions: list[int]) -> int | None:
    """Re-drive ``count`` goes ``count`` partitions on from where the question was first published."""
    if not entry.offsets or not partitions:
        return None  # unknown: the key decides
    first = entry.offsets[0][0].partition
    return partitions[(partitions.index(first) + count) % len(partitions)] if first in partitions else None


async def _sweep(rec: Reconciler, producer: AIOKafkaProducer, consumer: AIOKafkaConsumer) -> None:
    try:
        consumed, workers_present = await _worker_group(rec.settings)
        redrive, give_up = await asyncio.to_thread(rec.sweep, None, consumed, workers_present)
    except Exception as exc:  # database away: try again next sweep
        log.error("reconciler cannot read requests (%s); retrying next sweep", exc)
        rec.last_activity = time.time()  # workers waiting for Postgres are not idle: give them a period after it
        return
    settings = rec.settings
    partitions = sorted(await producer.partitions_for(settings.topic("questions")))
    for entry in redrive:
        count = await asyncio.to_thread(rec.tracker.note_redrive, entry.question.request_id)
        await producer.send_and_wait(settings.topic("questions"), value=entry.value, key=entry.key,
                                     partition=redrive_partition(entry, count, partitions))
        rec.redriven += 1
        metrics.REDRIVEN.inc()
        log.warning("re-drove request_id=%s (no outcome after %.0fs; re-drive %d)",
                    entry.question.request_id, settings.reconcile_after_s, count)
    for entry in give_up:
        q = entry.question
        answer = failure_answer(q.request_id, q.question, q.scope, "RECONCILER: no outcome after "
                                f"{settings.reconcile_max_redrives} re-drives", policy_version=settings.policy_version)
        await producer.send_and_wait(settings.topic("answers"), value=rec.sealer.payload(answer), key=entry.key)
        await asyncio.to_thread(rec.tracker.mark, q.request_id, "failed", detail=answer.failure_reason)
        rec.failed += 1
        metrics.OUTCOMES.labels("failed").inc()
        log.error("request_id=%s answered as failed after %d re-drives", q.request_id, settings.reconcile_max_redrives)
    commit = {tp: OffsetAndMetadata(offset, "") for tp, offset in rec.commit_offsets().items()
              if tp in consumer.assignment()}
    if commit:
        try:
            await consumer.commit(commit)
        except Exception as exc:  # a rebalance: the new owner re-reads from the last commit
            log.warning("reconciler commit skipped: %s", exc)


async def supervised() -> None:
    """The worker's background task: run the reconciler, restarting it after any error (never stop the worker)."""
    while True:
        try:
            await run()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reconciler stopped; restarting in 5s")
            await asyncio.sleep(5)


def stuck_group_watchdog(settings: Settings, groups: list[str], stop_after: float | None = None) -> None:
    """Evict the members of a consumer group stuck in a rebalance (and sample the worker group's consumer lag).

    Apache Kafka expires a killed member's session after ``session.timeout``;
    noida-db (the embedded broker) never does, and the group then waits forever
    in CompletingRebalance for a leader that is gone (seen in the kill -9 fault
    test). When a group has not been Stable for ``2 × broker_session_timeout_s``
    (the rebalance timeout, after which Apache Kafka drops members that did not
    rejoin) every member is removed (LeaveGroup): live members simply rejoin,
    dead ones do not. On a broker that expires sessions this never triggers.
    Runs in a daemon thread of the worker (a blocked group also blocks faust's
    own tasks).
    """
    from kafka.admin import KafkaAdminClient, MemberToRemove

    from kafka import KafkaConsumer

    for noisy in ("kafka.admin._groups", "kafka.net.selector"):  # faust's member metadata is not kafka's format
        logging.getLogger(noisy).setLevel(logging.ERROR)
    limit = 2 * settings.broker_session_timeout_s
    unstable_since: dict[str, float] = {}
    started = time.monotonic()
    admin = offsets = None
    while stop_after is None or time.monotonic() - started < stop_after:
        time.sleep(settings.broker_session_timeout_s / 2)
        try:
            admin = admin or KafkaAdminClient(bootstrap_servers=settings.bootstrap_servers, **settings.kafka_security(),
                                              client_id="citestream-group-watchdog")
            offsets = offsets or KafkaConsumer(bootstrap_servers=settings.bootstrap_servers,
                                               **settings.kafka_security(), client_id="citestream-lag",
                                               enable_auto_commit=False)
            metrics.sample_consumer_lag(admin, offsets, groups[0])
            for group, info in admin.describe_groups(groups).items():
                state = str(info.get("group_state", ""))
                if state in ("Stable", "Empty", "Dead", "") or not info.get("members"):
                    unstable_since.pop(group, None)
                    continue
                since = unstable_since.setdefault(group, time.monotonic())
                if time.monotonic() - since < limit:
                    continue
                members = [MemberToRemove(member_id=m["member_id"]) for m in info["members"]]
                log.warning("consumer group %s stuck in %s for %.0fs: removing its %d members so live ones "
                            "rejoin without the dead", group, state, time.monotonic() - since, len(members))
                admin.remove_group_members(group, members)
                unstable_since.pop(group, None)
        except Exception as exc:  # broker away or an unsupported call: keep watching, never stop the worker
            log.debug("group watchdog: %s", exc)
            for client in (admin, offsets):
                try:
                    if client is not None:
                        client.close()
                except Exception:
                    pass
            admin = offsets = None
