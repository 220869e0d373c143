"""The faust app and the one adapter every agent uses: decode → run the stage → emit, or dead-letter.

``stage_agent`` reads the stage function's type hints and refuses to wire it to
a topic whose registered record model differs (see ``topics.spec``). Every
record ends somewhere: on the sink topic, or on ``qa.deadletter`` with a reason
code (``intake`` checks a record before the stage sees it).
"""

from __future__ import annotations

import asyncio
import logging
import time
import typing
from collections.abc import Callable

import faust
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import OperationalError

from .. import metrics
from ..config import get_settings
from ..models.common import utcnow
from ..reconcile import failure_answer
from ..scrub import exception_reason
from ..store.requests import TERMINAL
from ..topics import REGISTRY, spec
from . import faust_fixes
from .deps import Deps, get_deps
from .intake import RecordRejected, check_size, contract_errors, dead_letter_record, decode_json, parse, usable_id

log = logging.getLogger("citestream.streams")
settings = get_settings()
faust_fixes.apply()

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
    return app.topic(settings.topic(name), key_type=bytes, value_type=bytes, partitions=REGISTRY[name].partitions)


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
    await _delivered(deadletter_topic, record.request_id, record.model_dump_json().encode())


async def _delivered(topic: faust.TopicT, key: str, value: bytes) -> None:
    """Send and wait for the broker's ack, so a state recorded afterwards never claims an unsent record."""
    pending = await topic.send(key=key.encode(), value=value)
    await pending


async def _run_with_retry(fn: Callable, record: BaseModel, deps: Deps, stage: str):
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


QUESTION_FLOW = {"questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations"}
"""Sources whose records are a question on its way to `answers`: a stage error there still ends in an answer."""


def _outcome_of(record: BaseModel, deps: Deps) -> str | None:
    row = deps.tracker.get(record.request_id)
    return row["outcome"] if row else None


def _admit(question: BaseModel, deps: Deps) -> str:
    """``duplicate`` (the id belongs to another question), ``answered`` (this one has its outcome) or ``open``."""
    stored, outcome = deps.tracker.admit(question.request_id, question.fingerprint(), question.question,
                                         question.scope)
    if stored != question.fingerprint():
        return "duplicate"
    return "answered" if outcome else "open"


def _failure_answer(record: BaseModel, stage: str, reason: str, deps: Deps):
    question, scope = getattr(record, "question", None), getattr(record, "scope", None)
    if question is not None and not isinstance(question, str):  # a record carrying the whole QuestionEvent
        question, scope = question.question, question.scope
    if question is None or scope is None:
        row = deps.tracker.get(record.request_id) or {}
        question, scope = question or row.get("question") or "", scope or row.get("scope") or "MIXED"
    return failure_answer(record.request_id, question, scope, reason,
                          policy_version=getattr(record, "policy_version", None) or settings.policy_version,
                          index_version=getattr(record, "index_version", None), trace=getattr(record, "trace", []))


def stage_agent(stage: str, source: str, sink: str, state_of: Callable[[BaseModel], str] | None = None):
    """Register ``fn(record, deps) -> record`` as the agent reading ``source`` and writing ``sink``."""

    def wire(fn: Callable):
        hints = typing.get_type_hints(fn)
        params = [p for p in fn.__code__.co_varnames[: fn.__code__.co_argcount]]
        in_model, out_model = hints[params[0]], hints["return"]
        source_spec, sink_spec = spec(source, in_model), spec(sink, out_model)
        sink_topic = kafka_topic(sink)

        async def agent(stream):
            async for event in stream.events():
                try:
                    await _process(event)
                except Exception:  # nothing a record does may stop the agent; the reconciler re-drives questions
                    metrics.FAILED.labels(stage).inc()
                    log.exception("stage=%s could not process the record at %s[%d]@%d", stage, source,
                                  event.message.partition, event.message.offset)

        async def _process(event: faust.EventT) -> None:
            metrics.RECEIVED.labels(stage).inc()
            try:
                data = decode_json(check_size(event.value, source_spec.max_bytes, source))
            except RecordRejected as exc:
                return await dead_letter(stage, source, event, exc.code, exc.reason)
            try:
                record = parse(in_model, data)
            except RecordRejected as exc:
                rid = data.get("request_id") if isinstance(data, dict) else None
                return await dead_letter(stage, source, event, exc.code, exc.reason, usable_id(rid))
            deps = get_deps()
            if source == "questions":
                admitted = await _run_with_retry(_admit, record, deps, stage)
                if admitted == "duplicate":
                    return await dead_letter(stage, source, event, "DUPLICATE_REQUEST_ID",
                                             "request_id already belongs to a different question", record.request_id)
                if admitted == "answered":
                    metrics.SKIPPED.labels(stage).inc()  # redelivered or re-published: already answered, never twice
                    log.info("stage=%s request_id=%s already has an outcome, skipped", stage, record.request_id)
                    return
            started_at, started = utcnow(), time.monotonic()
            try:
                out = await _run_with_retry(fn, record, deps, stage)
            except RecordRejected as exc:
                return await dead_letter(stage, source, event, exc.code, exc.reason, record.request_id)
            except Exception as exc:  # a bug or a bad record: never stop the worker for it
                log.exception("stage=%s failed request_id=%s", stage, record.request_id)
                metrics.FAILED.labels(stage).inc()
                reason = exception_reason(exc)
                await dead_letter(stage, source, event, "STAGE_ERROR", reason, record.request_id)
                if source in QUESTION_FLOW:
                    await _answer_failure(record, stage, f"STAGE_ERROR at {stage}: {reason}", deps)
                return
            metrics.LATENCY.labels(stage).observe(time.monotonic() - started)
            try:
                out.trace = [*out.trace, _timing(stage, started_at, started)]
                payload = out_model.model_validate(out.model_dump()).model_dump_json().encode()
            except ValidationError as exc:
                return await _reject_output(event, record, deps, "OUTPUT_CONTRACT", contract_errors(exc))
            if len(payload) > sink_spec.max_bytes:
                return await _reject_output(event, record, deps, "OUTPUT_TOO_LARGE",
                                            f"{len(payload)} bytes; {sink} takes at most {sink_spec.max_bytes}")
            if sink == "answers":  # the outcome is recorded only once the answer is safely on the broker
                if await _run_with_retry(_outcome_of, record, deps, stage):
                    metrics.SKIPPED.labels(stage).inc()  # already answered (a re-drive raced it): keep the first
                    return
                await _delivered(sink_topic, record.request_id, payload)
            else:  # an unsent intermediate record is found by the reconciler (no outcome): no need to wait
                await sink_topic.send(key=record.request_id.encode(), value=payload)
            metrics.PROCESSED.labels(stage).inc()
            if getattr(out, "fallback_used", False) and stage == "retrieve":
                metrics.FALLBACK.inc()
            if state_of is not None:
                state = state_of(out)
                await _run_with_retry(lambda r, d: d.tracker.mark(r.request_id, state), record, deps, stage)
                if state in TERMINAL:
                    metrics.OUTCOMES.labels(state).inc()

        async def _reject_output(event: faust.EventT, record: BaseModel, deps: Deps, code: str, reason: str) -> None:
            """The stage's output cannot be sent: dead-letter the input, and answer a question as failed."""
            metrics.FAILED.labels(stage).inc()
            await dead_letter(stage, source, event, code, reason, record.request_id)
            if source in QUESTION_FLOW:
                await _answer_failure(record, stage, f"{code} at {stage}: {reason}", deps)

        agent.__name__ = agent.__qualname__ = f"{stage}_agent"
        app.agent(kafka_topic(source), name=f"citestream.{stage}")(agent)
        return fn

    return wire


async def _answer_failure(record: BaseModel, stage: str, reason: str, deps: Deps) -> None:
    """Publish the failure refusal on `answers` and record the request as failed."""
    try:
        answer = await _run_with_retry(lambda r, d: _failure_answer(r, stage, reason, d), record, deps, stage)
        if await _run_with_retry(_outcome_of, record, deps, stage):
            return  # the question already has its one outcome
        await _delivered(answers_topic, record.request_id, answer.model_dump_json().encode())
        await _run_with_retry(lambda r, d: d.tracker.mark(r.request_id, "failed", detail=answer.failure_reason),
                              record, deps, stage)
        metrics.OUTCOMES.labels("failed").inc()
    except Exception:  # the reconciler re-drives it later; the worker keeps going
        log.exception("stage=%s could not publish the failure answer for request_id=%s", stage, record.request_id)


def _timing(stage: str, started_at, started: float):
    from ..models import StageTiming

    return StageTiming(stage=stage, started_at=started_at, elapsed_ms=round((time.monotonic() - started) * 1000, 3))


__all__ = ["RecordRejected", "app", "dead_letter", "kafka_topic", "stage_agent"]
