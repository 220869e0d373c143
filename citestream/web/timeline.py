"""One request's timeline: every record it left on the flow's topics, read back from Kafka by key.

A group-less consumer reads the latest ``timeline_window`` records of each
partition of each topic up to the end offsets taken when the read starts, and
keeps those keyed by the request_id. The records are shown as they are on the
topic (a generic summary plus the JSON), with the trace each one carries and, on a
topic only workers write, whether its MAC holds; a record whose body names another
request (a worker's record published again under this key) is marked as not this
request's. Then the request's ledger rows, their replay and the verified chain
from Postgres. Records are decoded with the intake's decoder (``core.strict_json``),
so a hostile one gets its reason, not a 500.

A read starts a Kafka consumer and the chain check reads the whole ledger, so
``Timelines`` shares one read of a request among the GETs of ``timeline_cache_s``,
verifies the chain at most once in that time and never twice at once, and starts at most
``timeline_reads_per_minute`` reads (``Throttled`` past that: the page answers 429).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer
from sqlalchemy import Engine

from ..ops.client import partitions_of
from ..config import Settings
from ..core.errors import RecordRejected
from ..core.strict_json import check_size, decode_json
from ..topics import spec
from .throttle import PerMinute
from .queries import chain_status, ledger_rows, request_state
from .settings import WebSettings
from .trust import PageTrust
from .views import printable, raw_json, record_summary

TIMELINE_TOPICS = ("questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "answers",
                   "qa.deadletter")
READ_LIMIT_S = 15.0
CACHED_REQUESTS = 256


async def read_back(settings: Settings, web: WebSettings, trust: PageTrust, request_id: str) -> list[dict]:
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
                        found.append(_entry(names[tp.topic], m, trust, request_id))
                if messages and messages[-1].offset + 1 >= ends[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()
    order = {name: i for i, name in enumerate(TIMELINE_TOPICS)}
    found.sort(key=lambda e: (e["timestamp_ms"] or 0, order[e["topic"]]))
    return found


def _entry(topic: str, message, trust: PageTrust, request_id: str) -> dict:
    """One record as the timeline shows it: readable with its summary, or its escaped bytes and why not; on a sealed
    topic, ``authentic`` says whether a worker wrote it for this request (``not_authentic`` why not); ``foreign``
    is the request id its body names when that is not this one (``_not_this_request``)."""
    entry = {"topic": topic, "partition": message.partition, "offset": message.offset,
             "timestamp_ms": message.timestamp, "readable": False, "unreadable": None, "summary": {}, "trace": [],
             "json": "", "authentic": None, "not_authentic": None, "foreign": None}
    topic_spec = spec(topic)
    try:
        record = decode_json(check_size(message.value, topic_spec.max_bytes, topic))
    except RecordRejected as exc:
        record, entry["unreadable"] = None, f"{exc.code}: {exc.reason}"
    if not isinstance(record, dict):
        entry["unreadable"] = entry["unreadable"] or "not a JSON object"
        return {**entry, "preview": printable(message.value or b"")}
    if topic_spec.sealed:
        entry["not_authentic"] = trust.problem(record)
        entry["authentic"] = entry["not_authentic"] is None
    _not_this_request(entry, record, request_id)
    shown = _escaped(record)  # after the seal's check, which is of the record as it is
    trace = shown.get("trace")
    if not isinstance(trace, list):
        trace = []
    return {**entry, "readable": True, "summary": record_summary(shown),
            "trace": [t for t in trace if isinstance(t, dict)][:20], "json": raw_json(shown)}


def _escaped(value):
    """``value`` with every lone surrogate in its strings and names written as its escape (``\\ud800``): strict JSON
    lets ``"\\ud800"`` through, and the answer, which is UTF-8, could not be sent (a 500: review after issue 54,
    N1). Decoded JSON is at most ``MAX_JSON_DEPTH`` deep, so the recursion is bounded."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    return value


def _not_this_request(entry: dict, record: dict, request_id: str) -> None:
    """Mark a record whose body names another request: the seal covers the body, not the Kafka key, so a worker's
    record for request A published again under key B verifies, and showed in B's timeline as "sealed by a worker"
    (issue 54). It is A's, never shown as B's."""
    named = record.get("request_id")
    if named == request_id:
        return
    shown = printable(named.encode("utf-8", "backslashreplace"), 128) if isinstance(named, str) else "(none)"
    entry["foreign"] = shown
    if entry["authentic"]:
        entry["authentic"] = False
        entry["not_authentic"] = (f"a worker sealed it for request {shown}, not this request: it was published again "
                                  "under this request's key")
    elif entry["not_authentic"] is None:
        entry["not_authentic"] = f"its body names request {shown}, not this request"


class Throttled(Exception):
    def __init__(self, retry_after_s: float):
        super().__init__(f"too many timeline reads; retry in {retry_after_s:.0f} s")
        self.retry_after_s = retry_after_s


class Timelines:
    """Request timelines, each read once per ``timeline_cache_s`` and at most ``timeline_reads_per_minute``."""

    def __init__(self, settings: Settings, web: WebSettings, engine: Engine, trust: PageTrust):
        self.settings, self.web, self.engine, self.trust = settings, web, engine, trust
        self.reads = PerMinute(web.timeline_reads_per_minute)
        self.started = 0  # reads started (each one a Kafka consumer)
        self._cache: OrderedDict[str, tuple[float, asyncio.Task]] = OrderedDict()
        self._chain: tuple[float, asyncio.Task] | None = None

    async def get(self, request_id: str, client: Callable[[], float] | None = None) -> dict:
        """The request's timeline; a read it starts costs one of ``client``'s (the asking client's budget: seconds to
        wait, or 0) and one of the page's own."""
        now = time.monotonic()
        cached = self._cache.get(request_id)
        if cached is None or now - cached[0] > self.web.timeline_cache_s:
            wait = (client() if client else 0.0) or self.reads.allow()
            if wait:
                raise Throttled(wait)
            self.started += 1
            cached = (now, asyncio.create_task(self._read(request_id)))
            self._cache[request_id] = cached
            while len(self._cache) > CACHED_REQUESTS:
                self._cache.popitem(last=False)
        return await asyncio.shield(cached[1])

    async def _read(self, request_id: str) -> dict:
        records, rows, chain, state = await asyncio.gather(
            read_back(self.settings, self.web, self.trust, request_id),
            asyncio.to_thread(ledger_rows, self.engine, request_id),
            self._chain_status(),
            asyncio.to_thread(request_state, self.engine, request_id),
        )
        return {"request_id": request_id, "records": records, "ledger": {"rows": rows, "chain": chain},
                "state": state, "window": self.web.timeline_window}

    async def _chain_status(self) -> dict:
        """The whole chain's check, shared by the reads of ``timeline_cache_s``, and never two at once: a check
        still running is awaited however old it is (issue 54: on a ledger that takes longer than the cache time
        to read, every read started another whole-ledger scan beside the running ones)."""
        now = time.monotonic()
        if self._chain is None or (self._chain[1].done() and now - self._chain[0] > self.web.timeline_cache_s):
            self._chain = (now, asyncio.create_task(asyncio.to_thread(chain_status, self.engine)))
        return await asyncio.shield(self._chain[1])
