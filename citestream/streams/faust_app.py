"""The faust app and the one adapter every agent uses: decode → run the stage → publish → record, or dead-letter.

``wire(step)`` registers the agent of one row of ``flow.FLOW``; what differs between agents is a flag on the
row. Every record ends somewhere: on the sink topic, or on ``qa.deadletter`` with a reason code (``intake``
checks a record before the stage sees it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import cast

import faust
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError
from sqlalchemy.exc import OperationalError

from .. import metrics
from ..config import get_settings
from ..core.errors import RecordRejected
from ..deps import Deps, get_deps
from ..flow import Step
from ..models import DeadLetter, QuestionEvent
from ..models.common import Envelope
from ..models.common import utcnow
from ..refusals import failure_answer
from ..core.scrub import exception_reason
from ..store.requests import TERMINAL
from ..topics import partitions, spec
from . import faust_fixes, idle_fetch, member_id
from .intake import check_size, contract_errors, dead_letter_record, decode_json, parse, usable_id

log = logging.getLogger("citestream.streams")
settings = get_settings()
faust_fixes.apply()
member_id.apply()
idle_fetch.apply(settings.broker_idle_fetch_ms / 1000)

app = faust.App(
    settings.app_id,
    broker=settings.broker_url,
    store="memory://",
    key_serializer="raw",
    value_serializer="raw",
    consumer_auto_offset_reset="earliest",
    broker_session_timeout=settings.broker_session_timeout_s,
    broker_heartbeat_interval=1.0,
    broker_rebalance_timeout=settings.broker_session_timeout_s * 2,
    producer_acks=-1,
    web_enabled=settings.web_port > 0,
    web_port=settings.web_port or 6066,
    web_bind=settings.metrics_host,
    broker_credentials=settings.faust_credentials(),
    topic_partitions=4,
)


def kafka_topic(name: str) -> faust.TopicT:
    return app.topic(settings.topic(name), key_type=bytes, value_type=bytes,
                     partitions=partitions(name, settings.topic_partitions))


deadletter_topic = kafka_topic("qa.deadletter")
answers_topic = kafka_topic("answers")


async def dead_letter(stage: str, source: str, event: faust.EventT, code: str, reason: str,
                      request_id: str | None = None) -> None:
    message = event.message
    record = dead_letter_record(stage=stage, source=source, key=event.key, value=event.value, code=code,
                                reason=reason, partition=message.partition, offset=message.offset,
                                request_id=request_id, policy_version=settings.policy_version)
    log.warning("dead-letter stage=%s code=%s request_id=%s: %s", stage, code, record.request_id, record.reason[:200])
    metrics.DEAD_LETTERED.labels(stage, code).inc()
    await _delivered(deadletter_topic, record.request_id, sealed(record))


SIDE_DEAD_LETTER_TIMEOUT_S = 30.0


def _publish_side_dead_letter(letter: DeadLetter) -> None:
    """From a stage's worker thread: hand the letter to the event loop and wait until it is sent, so it is on
    its topic before the stage's own record moves on."""
    log.warning("dead-letter stage=%s code=%s request_id=%s: %s", letter.stage, letter.reason_code,
                letter.request_id, letter.reason[:200])
    metrics.DEAD_LETTERED.labels(letter.stage, letter.reason_code).inc()
    send = deadletter_topic.send(key=letter.request_id.encode(), value=sealed(letter))
    asyncio.run_coroutine_threadsafe(send, app.loop).result(timeout=SIDE_DEAD_LETTER_TIMEOUT_S)


def stream_deps() -> Deps:
    """The worker's shared ``Deps``, with side dead letters going to ``qa.deadletter``."""
    deps = get_deps()
    if deps.publish_dead_letter is None:
        deps.publish_dead_letter = _publish_side_dead_letter
    return deps


def sealed(record) -> bytes:
    """A record's bytes for a topic, with the MAC that tells its reader a worker wrote it (``sealing``)."""
    return stream_deps().sealer.payload(record)


async def _delivered(topic: faust.TopicT, key: str, value: bytes) -> None:
    """Send and wait for the broker's ack, so a state recorded afterwards never claims an unsent record."""
    pending = await topic.send(key=key.encode(), value=value)
    await pending


async def _run_with_retry(fn: Callable, record: Envelope, deps: Deps, stage: str):
    """Run the synchronous stage off the event loop; wait out database outages instead of failing the record."""
    delay = 0.5
    while True:
        try:
            result = await asyncio.to_thread(fn, record, deps)
            metrics.DB_UP.set(1)
            return result
        except OperationalError as exc:
            metrics.DB_UP.set(0)
            metrics.DB_RETRIES.labels(stage).inc()
            log.error("stage=%s database unavailable, retrying in %.1fs: %s", stage, delay, exc.orig)
            await asyncio.sleep(delay)
            delay = min(delay * 2, settings.stage_retry_max_s)


def _outcome_of(record: Envelope, deps: Deps) -> str | None:
    row = deps.tracker.get(record.request_id)
    return row["outcome"] if row else None


def _admit(question: QuestionEvent, deps: Deps) -> str:
    """``duplicate`` (the id belongs to another question), ``answered`` (this one has its outcome) or ``open``
    (then recorded as received)."""
    stored, outcome = deps.tracker.admit(question.request_id, question.fingerprint(), question.question,
                                         question.scope)
    if stored != question.fingerprint():
        return "duplicate"
    if outcome:
        return "answered"
    deps.tracker.mark(question.request_id, "received", question=question.question, scope=question.scope)
    return "open"


def _failure_answer(record: Envelope, stage: str, reason: str, deps: Deps):
    question, scope = getattr(record, "question", None), getattr(record, "scope", None)
    if question is not None and not isinstance(question, str):  # a record carrying the whole QuestionEvent
        question, scope = question.question, question.scope
    if question is None or scope is None:
        row = deps.tracker.get(record.request_id) or {}
        question, scope = question or row.get("question") or "", scope or row.get("scope") or "MIXED"
    return failure_answer(record.request_id, question, scope, reason,
                          policy_version=getattr(record, "policy_version", None) or settings.policy_version,
                          index_version=getattr(record, "index_version", None), trace=getattr(record, "trace", []))


class StageAgent:
    """The agent of one ``flow.Step``: decode → (admit) → run → publish → record, or dead-letter."""

    def __init__(self, step: Step):
        self.step = step
        self.source_spec, self.sink_spec = spec(step.source), spec(step.sink)
        self.sink_topic = kafka_topic(step.sink)

    async def __call__(self, stream) -> None:
        together = settings.questions_together if self.step.takes_together else 1
        if together == 1:
            async for event in stream.events():
                await self.process_safely(event)
            return
        # the group's offsets are acknowledged once every record of it is done (faust acks after the loop body)
        async for events in stream.take_events(together, within=settings.questions_together_within_ms / 1000):
            await asyncio.gather(*(self.process_safely(event) for event in events))

    async def process_safely(self, event: faust.EventT) -> None:
        try:
            await self.process(event)
        except Exception:  # nothing a record does may stop the agent; the reconciler re-drives questions
            metrics.FAILED.labels(self.step.stage).inc()
            log.exception("stage=%s could not process the record at %s[%d]@%d", self.step.stage,
                          self.step.source, event.message.partition, event.message.offset)

    async def process(self, event: faust.EventT) -> None:
        stage = self.step.stage
        metrics.RECEIVED.labels(stage).inc()
        record = await self.decode(event)
        if record is None:
            return
        deps = stream_deps()
        if self.step.admits_requests and not await self.admit(event, cast(QuestionEvent, record), deps):
            return
        started_at, started = utcnow(), time.monotonic()
        out = await self.run(event, record, deps)
        if out is None:
            return
        metrics.LATENCY.labels(stage).observe(time.monotonic() - started)
        if await self.publish(event, record, out, _timing(stage, started_at, started), deps):
            await self.record(record, out, deps)

    async def decode(self, event: faust.EventT) -> Envelope | None:
        """The input record, or None once it is dead-lettered (size, JSON, MAC on a sealed topic, contract)."""
        step = self.step
        try:
            data = decode_json(check_size(event.value, self.source_spec.max_bytes, step.source))
        except RecordRejected as exc:
            await dead_letter(step.stage, step.source, event, exc.code, exc.reason)
            return None
        try:
            if step.checks_mac:
                stream_deps().sealer.check(data)
            return cast(Envelope, parse(step.in_model, data))  # every topic's model is an Envelope
        except RecordRejected as exc:
            rid = data.get("request_id") if isinstance(data, dict) else None
            await dead_letter(step.stage, step.source, event, exc.code, exc.reason, usable_id(rid))
            return None

    async def admit(self, event: faust.EventT, question: QuestionEvent, deps: Deps) -> bool:
        """A new request goes on; a reused id is dead-lettered; an answered one is skipped (never answered twice)."""
        stage = self.step.stage
        admitted = await _run_with_retry(_admit, question, deps, stage)
        if admitted == "duplicate":
            await dead_letter(stage, self.step.source, event, "DUPLICATE_REQUEST_ID",
                              "request_id already belongs to a different question", question.request_id)
        elif admitted == "answered":
            metrics.SKIPPED.labels(stage).inc()  # redelivered or re-published
            log.info("stage=%s request_id=%s already has an outcome, skipped", stage, question.request_id)
        return admitted == "open"

    async def run(self, event: faust.EventT, record: Envelope, deps: Deps) -> Envelope | None:
        """The stage's output, or None once the input is dead-lettered (and a question answered as failed)."""
        step = self.step
        try:
            return await _run_with_retry(step.run, record, deps, step.stage)
        except RecordRejected as exc:
            await dead_letter(step.stage, step.source, event, exc.code, exc.reason, record.request_id)
        except Exception as exc:  # a bug or a bad record: never stop the worker for it
            log.exception("stage=%s failed request_id=%s", step.stage, record.request_id)
            metrics.FAILED.labels(step.stage).inc()
            reason = exception_reason(exc)
            await dead_letter(step.stage, step.source, event, "STAGE_ERROR", reason, record.request_id)
            if step.answers_on_failure:
                await _answer_failure(record, step.stage, f"STAGE_ERROR at {step.stage}: {reason}", deps)
        return None

    async def publish(self, event: faust.EventT, record: Envelope, out: Envelope, timing, deps: Deps) -> bool:
        """Send the output, its timing appended, if it keeps the sink's contract; False when it was not sent."""
        step = self.step
        try:
            out.trace = [*out.trace, timing]
            payload = deps.sealer.payload(step.out_model.model_validate(out.model_dump()))
        except ValidationError as exc:
            await self.reject_output(event, record, deps, "OUTPUT_CONTRACT", contract_errors(exc))
            return False
        except PydanticSerializationError as exc:  # valid, yet not JSON (a lone surrogate in free-form data)
            await self.reject_output(event, record, deps, "OUTPUT_CONTRACT",
                                     f"the output cannot be serialized: {exception_reason(exc)}")
            return False
        if len(payload) > self.sink_spec.max_bytes:
            await self.reject_output(event, record, deps, "OUTPUT_TOO_LARGE",
                                     f"{len(payload)} bytes; {step.sink} takes at most {self.sink_spec.max_bytes}")
            return False
        if step.answers:  # the outcome is recorded only once the answer is safely on the broker
            if await _run_with_retry(_outcome_of, record, deps, step.stage):
                metrics.SKIPPED.labels(step.stage).inc()  # already answered (a re-drive raced it): keep the first
                return False
            await _delivered(self.sink_topic, record.request_id, payload)
        else:  # an unsent intermediate record is found by the reconciler (no outcome): no need to wait
            await self.sink_topic.send(key=record.request_id.encode(), value=payload)
        return True

    async def record(self, record: Envelope, out: Envelope, deps: Deps) -> None:
        """Count the output and record the request's new state."""
        step = self.step
        metrics.PROCESSED.labels(step.stage).inc()
        if step.counts_fallback and getattr(out, "fallback_used", False):
            metrics.FALLBACK.inc()
        if step.state is not None:
            state = step.state(out)
            await _run_with_retry(lambda r, d: d.tracker.mark(r.request_id, state), record, deps, step.stage)
            if state in TERMINAL:
                metrics.OUTCOMES.labels(state).inc()

    async def reject_output(self, event: faust.EventT, record: Envelope, deps: Deps, code: str, reason: str) -> None:
        """The stage's output cannot be sent: dead-letter the input, and answer a question as failed."""
        step = self.step
        metrics.FAILED.labels(step.stage).inc()
        await dead_letter(step.stage, step.source, event, code, reason, record.request_id)
        if step.answers_on_failure:
            await _answer_failure(record, step.stage, f"{code} at {step.stage}: {reason}", deps)


def wire(step: Step) -> None:
    """Register the agent of ``step``, named ``citestream.<stage>``, on its source topic."""
    agent = StageAgent(step)

    async def run_agent(stream) -> None:
        await agent(stream)

    run_agent.__name__ = run_agent.__qualname__ = f"{step.stage}_agent"
    app.agent(kafka_topic(step.source), name=f"citestream.{step.stage}")(run_agent)


async def _answer_failure(record: Envelope, stage: str, reason: str, deps: Deps) -> None:
    """Publish the failure refusal on `answers` and record the request as failed."""
    try:
        answer = await _run_with_retry(lambda r, d: _failure_answer(r, stage, reason, d), record, deps, stage)
        if await _run_with_retry(_outcome_of, record, deps, stage):
            return  # the question already has its one outcome
        await _delivered(answers_topic, record.request_id, sealed(answer))
        await _run_with_retry(lambda r, d: d.tracker.mark(r.request_id, "failed", detail=answer.failure_reason),
                              record, deps, stage)
        metrics.OUTCOMES.labels("failed").inc()
    except Exception:  # the reconciler re-drives it later; the worker keeps going
        log.exception("stage=%s could not publish the failure answer for request_id=%s", stage, record.request_id)


def _timing(stage: str, started_at, started: float):
    from ..models import StageTiming

    return StageTiming(stage=stage, started_at=started_at, elapsed_ms=round((time.monotonic() - started) * 1000, 3))


__all__ = ["app", "dead_letter", "kafka_topic", "sealed", "wire"]
