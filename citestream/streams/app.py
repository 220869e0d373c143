"""The faust app and the one adapter every agent uses: decode → run the stage → emit, or dead-letter.

``stage_agent`` reads the stage function's type hints and refuses to wire it to
a topic whose registered record model differs (see ``topics.spec``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import typing
from collections.abc import Callable

import faust
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import OperationalError

from ..config import get_settings
from ..models import DeadLetter
from ..models.common import utcnow
from ..topics import REGISTRY, spec
from .deps import Deps, get_deps

log = logging.getLogger("citestream.streams")
settings = get_settings()

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
    topic_partitions=4,
)


def kafka_topic(name: str) -> faust.TopicT:
    return app.topic(settings.topic(name), key_type=bytes, value_type=bytes, partitions=REGISTRY[name].partitions)


deadletter_topic = kafka_topic("qa.deadletter")


class RecordRejected(Exception):
    """Raised by a stage whose valid input cannot give a valid output: dead-letter it with ``code``."""

    def __init__(self, code: str, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


def _key_text(key: bytes | None) -> str | None:
    try:
        return key.decode("utf-8") if key else None
    except UnicodeDecodeError:
        return None


async def dead_letter(stage: str, source: str, event: faust.EventT, code: str, reason: str,
                      request_id: str | None = None) -> None:
    message = event.message
    key = event.key
    record = DeadLetter(
        request_id=request_id or _key_text(key) or f"unknown-{source}-{message.partition}-{message.offset}",
        policy_version=settings.policy_version, stage=stage, source_topic=source, reason_code=code,
        reason=reason[:2000], original_key_b64=base64.b64encode(key).decode() if key else None,
        original_value_b64=base64.b64encode(event.value or b"").decode(), partition=message.partition,
        offset=message.offset,
    )
    log.warning("dead-letter stage=%s code=%s request_id=%s: %s", stage, code, record.request_id, reason[:200])
    await deadletter_topic.send(key=record.request_id.encode(), value=record.model_dump_json().encode())


async def _run_with_retry(fn: Callable, record: BaseModel, deps: Deps, stage: str):
    """Run the synchronous stage off the event loop; wait out database outages instead of failing the record."""
    delay = 0.5
    while True:
        try:
            return await asyncio.to_thread(fn, record, deps)
        except OperationalError as exc:
            log.error("stage=%s database unavailable, retrying in %.1fs: %s", stage, delay, exc.orig)
            await asyncio.sleep(delay)
            delay = min(delay * 2, settings.stage_retry_max_s)


def stage_agent(stage: str, source: str, sink: str, state_of: Callable[[BaseModel], str] | None = None):
    """Register ``fn(record, deps) -> record`` as the agent reading ``source`` and writing ``sink``."""

    def wire(fn: Callable):
        hints = typing.get_type_hints(fn)
        params = [p for p in fn.__code__.co_varnames[: fn.__code__.co_argcount]]
        in_model, out_model = hints[params[0]], hints["return"]
        spec(source, in_model)
        spec(sink, out_model)
        sink_topic = kafka_topic(sink)

        async def agent(stream):
            async for event in stream.events():
                await _process(event)

        async def _process(event: faust.EventT) -> None:
            try:
                data = json.loads(event.value.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, AttributeError) as exc:
                return await dead_letter(stage, source, event, "DECODE_ERROR", f"{type(exc).__name__}: {exc}")
            try:
                record = in_model.model_validate(data)
            except ValidationError as exc:
                rid = data.get("request_id") if isinstance(data, dict) and isinstance(data.get("request_id"), str) else None
                return await dead_letter(stage, source, event, "SCHEMA_VIOLATION", _short(exc), rid)
            started_at, started = utcnow(), time.monotonic()
            deps = get_deps()
            try:
                out = await _run_with_retry(fn, record, deps, stage)
            except RecordRejected as exc:
                return await dead_letter(stage, source, event, exc.code, exc.reason, record.request_id)
            except Exception as exc:  # a bug or a bad record: never stop the worker for it
                log.exception("stage=%s failed request_id=%s", stage, record.request_id)
                return await dead_letter(stage, source, event, "STAGE_ERROR", f"{type(exc).__name__}: {exc}",
                                         record.request_id)
            try:
                out.trace = [*out.trace, _timing(stage, started_at, started)]
                payload = out_model.model_validate(out.model_dump()).model_dump_json().encode()
            except ValidationError as exc:
                return await dead_letter(stage, source, event, "OUTPUT_CONTRACT", _short(exc), record.request_id)
            await sink_topic.send(key=record.request_id.encode(), value=payload)
            if state_of is not None:
                await asyncio.to_thread(deps.tracker.mark, record.request_id, state_of(out))

        agent.__name__ = agent.__qualname__ = f"{stage}_agent"
        app.agent(kafka_topic(source), name=f"citestream.{stage}")(agent)
        return fn

    return wire


def _timing(stage: str, started_at, started: float):
    from ..models import StageTiming

    return StageTiming(stage=stage, started_at=started_at, elapsed_ms=round((time.monotonic() - started) * 1000, 3))


def _short(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
