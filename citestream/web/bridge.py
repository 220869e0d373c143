"""The page's Kafka client: publish to topics, read the outcome topics in a consumer group of its own.

The page is one more consumer of the flow, like any downstream application:
it never calls a stage function. One consumer (group ``<app_id>-web``) reads
``answers``, ``ops.alerts``, ``qa.deadletter`` and ``documents.ingested`` in
full, and only the keys of the stage topics (to show a question moving through
the flow; a key that is no request id is not passed on). A record read in full is
decoded strictly (``core.strict_json``) and shown only when its MAC holds
(``trust``): a record no worker wrote never reaches a browser; nor does a sealed
answer under the id of a question this page sent that names another question or
scope (``unbound``). Each record becomes a :class:`WebEvent`, kept for browsers that
connect later (``kept``: bounded in count and bytes) and fanned out to every
open server-sent-events stream.

On each partition assignment the consumer starts ``backlog`` records before the
end, so a fresh page shows recent traffic; the group commits nothing (the page
keeps no state worth resuming).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import KafkaConnectionError
from pydantic import TypeAdapter, ValidationError

from ..config import Settings
from ..core.errors import RecordRejected
from ..core.strict_json import check_size, decode_json
from ..models import DeadLetter, Envelope, FallbackRateAlert, IngestResult, QuestionEvent, ValidatedAnswer
from ..models.common import RequestId
from ..topics import spec
from .kept import KeptEvents
from .settings import WebSettings
from .trust import PageTrust
from .views import WebEvent, alert_view, answer_view, deadletter_view, ingested_view

log = logging.getLogger("citestream.web")

# topic → (event kind, record model, view); each view takes the records of its own model
READ_IN_FULL: dict[str, tuple[str, type[Envelope], Callable[[Any], dict]]] = {
    "answers": ("answer", ValidatedAnswer, answer_view),
    "ops.alerts": ("alert", FallbackRateAlert, alert_view),
    "qa.deadletter": ("deadletter", DeadLetter, deadletter_view),
    "documents.ingested": ("ingested", IngestResult, ingested_view),
}
STAGE_TOPICS = ("questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "documents.ingest")
"""Topics whose records the page only counts and locates by key (their values are not parsed)."""

SUBSCRIBER_QUEUE = 1000
ASKED_KEPT = 20_000
"""Questions the page sent whose answers it checks (``Bridge.unbound``): a digest each, the oldest forgotten first."""
_REQUEST_ID = TypeAdapter(RequestId)


def request_id_of(key: str | None) -> str | None:
    """``key`` if it is a valid request id (what a stage event may carry to every browser), else None."""
    if key is None:
        return None
    try:
        return _REQUEST_ID.validate_python(key)
    except ValidationError:
        return None


def _asked(question: str, scope: str) -> bytes:
    return hashlib.sha256(json.dumps([question, scope], ensure_ascii=False).encode()).digest()


class _StartNearTheEnd(ConsumerRebalanceListener):
    def __init__(self, bridge: Bridge):
        self.bridge = bridge

    async def on_partitions_revoked(self, revoked) -> None:
        return None

    async def on_partitions_assigned(self, assigned) -> None:
        await self.bridge._seek_backlog(list(assigned))


class Bridge:
    """Producer + one group consumer; ``subscribe`` gives a queue of WebEvents for one browser."""

    def __init__(self, settings: Settings, web: WebSettings):
        self.settings, self.web = settings, web
        self.group = web.group or f"{settings.app_id}-web"
        self.kept = {kind: KeptEvents(web.keep * 5, int(web.keep_mb * (1 << 20))) for kind, _, _ in
                     READ_IN_FULL.values()}
        self.trust = PageTrust(settings.record_public_key_path)
        self.hidden: dict[str, int] = {name: 0 for name in READ_IN_FULL}
        """Records read in full but not shown: unreadable, or not written by a worker (their MAC does not hold)."""
        self.stage_counts: dict[str, int] = {name: 0 for name in (*STAGE_TOPICS, *READ_IN_FULL)}
        self.unbound = 0
        """Sealed answers to a question this page sent that name another question or scope: not shown."""
        self.keys_dropped = 0
        """Stage-topic keys that are no request id: not passed on to browsers."""
        self._asked: OrderedDict[str, bytes] = OrderedDict()  # request id → digest of the question and scope sent
        self.subscribers: set[asyncio.Queue] = set()
        self.ready = asyncio.Event()
        self._topic_names = {settings.topic(name): name for name in (*READ_IN_FULL, *STAGE_TOPICS)}
        self._delivered: dict[tuple[str, int], int] = {}  # last offset passed on, per partition
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task | None = None
        self.connected = False

    # --- life cycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect in the background: the page serves (and says "reconnecting") while the broker is away,
        and the process stops on a signal whatever the broker does."""
        self._task = asyncio.create_task(self._main(), name="web-bridge")

    async def _main(self) -> None:
        delay = 0.5
        while True:
            try:
                await self._connect()
                break
            except KafkaConnectionError as exc:
                log.warning("web bridge: broker %s not reachable (%s), retrying in %.1fs",
                            self.settings.bootstrap_servers, exc, delay)
                await self._close_clients()
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10)
        self.connected = True
        await self._run()

    async def _close_clients(self) -> None:
        for client in (self._consumer, self._producer):
            if client is not None:
                await client.stop()
        self._consumer = self._producer = None

    async def _connect(self) -> None:
        servers = self.settings.bootstrap_servers
        security = self.settings.kafka_security()
        self._producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all", linger_ms=5, **security)
        await self._producer.start()
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=servers, group_id=self.group, enable_auto_commit=False,
            auto_offset_reset="latest", session_timeout_ms=int(self.settings.broker_session_timeout_s * 1000),
            heartbeat_interval_ms=1000, client_id=self.group, **security,
        )
        await self._consumer.start()
        self._consumer.subscribe(topics=sorted(self._topic_names), listener=_StartNearTheEnd(self))

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._close_clients()

    async def _seek_backlog(self, assigned: list[TopicPartition]) -> None:
        consumer = self._consumer
        if not assigned or consumer is None:
            return
        ends = await consumer.end_offsets(assigned)
        starts = await consumer.beginning_offsets(assigned)
        for tp in assigned:
            consumer.seek(tp, max(starts[tp], ends[tp] - self.web.backlog))
        self.ready.set()

    async def _run(self) -> None:
        assert self._consumer is not None
        while True:
            try:
                batches = await self._consumer.getmany(timeout_ms=500, max_records=500)
            except asyncio.CancelledError:
                raise
            except Exception:  # a broker hiccup must not end the page's stream; aiokafka reconnects
                log.exception("web bridge: fetch failed, retrying")
                await asyncio.sleep(1)
                continue
            for tp, messages in batches.items():
                for message in messages:
                    self._handle(tp.topic, message)

    # --- records in -------------------------------------------------------------------------------

    def _handle(self, full_topic: str, message) -> None:
        topic = self._topic_names.get(full_topic)
        if topic is None:
            return
        # a rebalance seeks back by the backlog again: records already passed on are not passed on twice
        if message.offset <= self._delivered.get((full_topic, message.partition), -1):
            return
        self._delivered[(full_topic, message.partition)] = message.offset
        key = message.key.decode("utf-8", errors="replace") if message.key else None
        self.stage_counts[topic] += 1
        if topic in READ_IN_FULL:
            kind, model, view = READ_IN_FULL[topic]
            try:
                record = self._shown(topic, model, message.value)
            except RecordRejected as exc:
                self.hidden[topic] += 1
                log.warning("web bridge: record on %s at %s/%s not shown (%s): %s", topic, message.partition,
                            message.offset, exc.code, exc.reason[:200])
                return
            if self._answers_another(record):
                return
            event = WebEvent(kind=kind, topic=topic, request_id=record.request_id, partition=message.partition,
                             offset=message.offset, timestamp_ms=message.timestamp, data=view(record))
            self.kept[kind].add(event)
        else:
            event = WebEvent(kind="stage", topic=topic, request_id=self._stage_key(key), partition=message.partition,
                             offset=message.offset, timestamp_ms=message.timestamp)
        self._fan_out(event)

    def _stage_key(self, key: str | None) -> str | None:
        """The key a stage event carries to every browser: a request id, or None (counted in ``keys_dropped``). A
        key may be as large as the broker takes, and every open stream would queue it up to 1,000 times (issue 54)."""
        rid = request_id_of(key)
        if key is not None and rid is None:
            self.keys_dropped += 1
        return rid

    def _answers_another(self, record: Envelope) -> bool:
        """Whether ``record`` is an answer under the id of a question this page sent, naming another question or
        scope: a worker's sealed answer to a publisher's question that was admitted first under the page's id, which
        the visitor must not read as theirs (issue 54). Counted in ``unbound`` and logged."""
        if not isinstance(record, ValidatedAnswer):
            return False
        sent = self._asked.get(record.request_id)
        if sent is None or sent == _asked(record.question, record.scope):
            return False
        self.unbound += 1
        log.warning("web bridge: a sealed answer under request %s, which this page sent, answers another question "
                    "or scope: not shown", record.request_id)
        return True

    def _shown(self, topic: str, model: type[Envelope], value: bytes | None) -> Envelope:
        """The record to show, or ``RecordRejected``: the intake's decoder, then the MAC of a sealed topic, then
        the topic's contract."""
        topic_spec = spec(topic)
        data = decode_json(check_size(value, topic_spec.max_bytes, topic))
        if topic_spec.sealed:
            self.trust.check(data)
        try:
            return model.model_validate(data)
        except (ValidationError, RecursionError) as exc:
            raise RecordRejected("SCHEMA_VIOLATION", type(exc).__name__) from None

    def _fan_out(self, event: WebEvent) -> None:
        for queue in list(self.subscribers):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:  # a browser that stopped reading: end its stream; EventSource reconnects
                self.subscribers.discard(queue)
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)

    # --- browsers ---------------------------------------------------------------------------------

    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue(maxsize=SUBSCRIBER_QUEUE)
        self.subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        self.subscribers.discard(queue)

    def snapshot(self) -> dict:
        """What a newly connected browser starts from: recent records of each kind, and the stage counts."""
        return {
            "recent": {kind: [e.model_dump(mode="json") for e in kept.recent(self.web.keep)]
                       for kind, kept in self.kept.items()},
            "counts": dict(self.stage_counts),
            "group": self.group,
            "prefix": self.settings.topic_prefix,
            "trust": self.trust_status(),
        }

    def trust_status(self) -> dict:
        """Whether the page can verify records, why not, and how many it held back per topic."""
        return {"verifying": self.trust.unavailable is None, "why_not": self.trust.unavailable,
                "hidden": dict(self.hidden), "unbound": self.unbound}

    def latest(self, kind: str, request_id: str) -> WebEvent | None:
        return self.kept[kind].latest(request_id)

    # --- records out ------------------------------------------------------------------------------

    async def publish(self, topic: str, record: Envelope) -> None:
        """Send one record keyed by its request_id and wait for the broker's acknowledgement."""
        if not self.connected or self._producer is None:
            raise KafkaConnectionError("not connected to the broker yet")
        if isinstance(record, QuestionEvent):  # before sending: its answer may come back at once
            self._remember(record)
        await self._producer.send_and_wait(self.settings.topic(topic), value=record.model_dump_json().encode(),
                                           key=record.request_id.encode())

    def _remember(self, question: QuestionEvent) -> None:
        """The question and scope this page sent under ``question``'s id, for ``_answers_another``."""
        self._asked[question.request_id] = _asked(question.question, question.scope)
        self._asked.move_to_end(question.request_id)
        while len(self._asked) > ASKED_KEPT:
            self._asked.popitem(last=False)


def sse_payload(event: WebEvent) -> str:
    return json.dumps(event.model_dump(mode="json"), ensure_ascii=False)
