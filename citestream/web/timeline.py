"""One request's timeline: every record it left on the flow's topics, read back from Kafka by key.

A group-less consumer reads the latest ``timeline_window`` records of each
partition of each topic up to the end offsets taken when the read starts, and
keeps those keyed by the request_id. The records are shown as they are on the
topic (a generic summary plus the JSON), with the trace each one carries, then
the request's ledger rows, their replay and the verified chain from Postgres.
"""

from __future__ import annotations

import asyncio
import json
import time

from aiokafka import AIOKafkaConsumer
from sqlalchemy import Engine

from ..config import Settings
from ..client import partitions_of
from .queries import ledger_status, request_state
from .settings import WebSettings
from .views import printable, raw_json, record_summary

TIMELINE_TOPICS = ("questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "answers",
                   "qa.deadletter")
READ_LIMIT_S = 15.0


async def read_back(settings: Settings, web: WebSettings, request_id: str) -> list[dict]:
    """The request's records on every timeline topic, in time order (topic order on ties)."""
    key = request_id.encode()
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, enable_auto_commit=False,
                                client_id=f"{settings.app_id}-web-timeline", **settings.kafka_security())
    await consumer.start()
    found: list[dict] = []
    try:
        tps = await partitions_of(consumer, settings, *TIMELINE_TOPICS)
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        starts = await consumer.beginning_offsets(tps)
        pending = {tp for tp in tps if ends[tp] > starts[tp]}
        for tp in tps:
            consumer.seek(tp, max(starts[tp], ends[tp] - web.timeline_window))
        names = {settings.topic(name): name for name in TIMELINE_TOPICS}
        deadline = time.monotonic() + READ_LIMIT_S
        while pending and time.monotonic() < deadline:
            batches = await consumer.getmany(*pending, timeout_ms=500, max_records=2000)
            for tp, messages in batches.items():
                for m in messages:
                    if m.offset < ends[tp] and m.key == key:
                        found.append(_entry(names[tp.topic], m))
                if messages and messages[-1].offset + 1 >= ends[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()
    order = {name: i for i, name in enumerate(TIMELINE_TOPICS)}
    found.sort(key=lambda e: (e["timestamp_ms"] or 0, order[e["topic"]]))
    return found


def _entry(topic: str, message) -> dict:
    try:
        record = json.loads(message.value)
    except (ValueError, UnicodeDecodeError):
        record = None
    if not isinstance(record, dict):
        return {"topic": topic, "partition": message.partition, "offset": message.offset,
                "timestamp_ms": message.timestamp, "readable": False,
                "preview": printable(message.value or b""), "summary": {}, "trace": [], "json": ""}
    trace = record.get("trace")
    if not isinstance(trace, list):
        trace = []
    return {"topic": topic, "partition": message.partition, "offset": message.offset,
            "timestamp_ms": message.timestamp, "readable": True, "summary": record_summary(record),
            "trace": [t for t in trace if isinstance(t, dict)][:20], "json": raw_json(record)}


async def timeline(settings: Settings, web: WebSettings, engine: Engine, request_id: str) -> dict:
    records, ledger, state = await asyncio.gather(
        read_back(settings, web, request_id),
        asyncio.to_thread(ledger_status, engine, request_id),
        asyncio.to_thread(request_state, engine, request_id),
    )
    return {"request_id": request_id, "records": records, "ledger": ledger, "state": state,
            "window": web.timeline_window}
