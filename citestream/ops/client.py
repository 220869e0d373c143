"""Publish records and collect the matching replies by request_id (used by `ask`, eval, tests, bench)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from pydantic import BaseModel, ValidationError

from ..streams import idle_fetch
from ..config import Settings, get_settings
from ..core.errors import CannotStart, RecordRejected
from ..core.strict_json import check_size, decode_json
from ..models import Envelope
from ..sealing import KeyUnavailable, RecordVerifier
from ..topics import REGISTRY, partitions

log = logging.getLogger("citestream.client")

BINDING_FIELDS = ("request_id", "question", "scope")
"""What a reply's sealed body must repeat of its request, wherever both records have the field: the seal covers the
body, not the Kafka key, so a sealed answer of another request moved under this request's key still verifies."""


def unbound_fields(sent: BaseModel, reply: BaseModel) -> list[str]:
    """The fields naming the request that ``reply`` does not repeat as ``sent`` had them (empty: bound to it)."""
    return [name for name in BINDING_FIELDS if name in type(sent).model_fields and name in type(reply).model_fields
            and getattr(reply, name) != getattr(sent, name)]


async def partitions_of(consumer: AIOKafkaConsumer, settings: Settings, *topics: str) -> list[TopicPartition]:
    """Every partition the ``topics`` have on the broker, however many each was created with (the settings' count if
    the broker does not know a topic yet): a reader that assumed the registry's count would miss the others'
    records. One metadata refresh for all of them."""
    await consumer.topics()  # refreshes the cluster metadata
    out = []
    for topic in topics:
        name = settings.topic(topic)
        found = consumer.partitions_for_topic(name)
        out += [TopicPartition(name, p) for p in sorted(found or range(partitions(topic, settings.topic_partitions)))]
    return out


def paced_consumer(settings: Settings, **kw) -> AIOKafkaConsumer:
    """A group-less consumer whose empty fetches are paced (``idle_fetch``): a client waiting for replies from the
    embedded broker otherwise spins, and took more than half a core from the worker it waited for (a bench
    client: 573 ms of CPU per question answered, 2026-11-25)."""
    idle_fetch.apply(settings.broker_idle_fetch_ms / 1000)
    return AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, enable_auto_commit=False,
                            **settings.kafka_security(), **kw)


async def _tail_consumer(settings: Settings, topic: str) -> AIOKafkaConsumer:
    """A group-less consumer positioned at the current end of every partition of ``topic``."""
    consumer = paced_consumer(settings, auto_offset_reset="earliest")
    await consumer.start()
    tps = await partitions_of(consumer, settings, topic)
    consumer.assign(tps)
    await consumer.seek_to_end(*tps)
    for tp in tps:  # resolve the lazy seek now, before anything is published
        await consumer.position(tp)
    return consumer


class ReplyReader:
    """Reads a reply as the page does: the intake's strict decoder, the seal on a sealed topic (the worker's public
    key: a record no worker wrote is never taken for the reply), then the topic's contract."""

    def __init__(self, settings: Settings, topic: str):
        self.spec = REGISTRY[topic]
        self.verifier: RecordVerifier | None = None
        if self.spec.sealed:
            try:
                self.verifier = RecordVerifier.from_file(settings.record_public_key_path)
            except KeyUnavailable as exc:
                raise CannotStart(f"cannot check the seals of {topic}: {exc} ({exc.where}); start a worker, or "
                                  "point CITESTREAM_RECORD_PUBLIC_KEY_FILE at its records.pub") from None
        self.refused = 0
        self.unbound = 0
        """Sealed replies found under a request's key whose body names another request (a replay): passed over."""

    def read_for(self, sent: BaseModel, value: bytes | None) -> BaseModel | None:
        """The reply to ``sent``, or None: not one a worker wrote (``refused``), or one a worker wrote for another
        request (``unbound``, logged)."""
        read = self.read(value)
        if read is None:
            return None
        if wrong := unbound_fields(sent, read):
            self.unbound += 1
            log.warning("a sealed %s record under key %r answers another request (its %s differ): passed over",
                        self.spec.name, getattr(sent, "request_id", None), ", ".join(wrong))
            return None
        return read

    def read(self, value: bytes | None) -> BaseModel | None:
        """The record, or None (counted in ``refused``) when it is not one a worker wrote as it is."""
        try:
            data = decode_json(check_size(value, self.spec.max_bytes, self.spec.name))
            if self.verifier is not None:
                self.verifier.check(data)
            return self.spec.value_model.model_validate(data)
        except (RecordRejected, ValidationError, RecursionError):
            self.refused += 1
            return None


async def publish_and_collect(
    records: Iterable[Envelope], *, source: str = "questions", reply: str = "answers", timeout_s: float = 60.0,
    settings: Settings | None = None, raw: Iterable[tuple[bytes | None, bytes]] = (),
    reader: ReplyReader | None = None,
) -> tuple[dict[str, BaseModel], dict[str, float]]:
    """Send ``records`` (and any ``raw`` key/value pairs) to ``source``; wait for one ``reply`` per request_id:
    the first one a worker wrote for that very request (``ReplyReader.read_for``: its sealed body repeats the
    request id, question and scope sent; pass a reader to learn how many others were passed over).

    Returns the replies and each reply's latency in seconds, measured from its send.
    """
    settings = settings or get_settings()
    reader = reader or ReplyReader(settings, reply)
    records = list(records)
    consumer = await _tail_consumer(settings, reply)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all", linger_ms=5,
                                **settings.kafka_security())
    await producer.start()
    sent_at: dict[str, float] = {}
    sent: dict[str, Envelope] = {}
    replies: dict[str, BaseModel] = {}
    latency: dict[str, float] = {}
    try:
        for key, value in raw:
            await producer.send(settings.topic(source), value=value, key=key)
        for record in records:
            sent_id = record.request_id
            sent_at[sent_id], sent[sent_id] = time.monotonic(), record
            await producer.send(settings.topic(source), value=record.model_dump_json().encode(), key=sent_id.encode())
        await producer.flush()
        deadline = time.monotonic() + timeout_s
        while len(replies) < len(sent_at) and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=200)
            now = time.monotonic()
            for messages in batches.values():
                for message in messages:
                    rid = message.key.decode("utf-8", "replace") if message.key else None  # not UTF-8: no id sent
                    if rid in sent and rid not in replies and (
                            read := reader.read_for(sent[rid], message.value)) is not None:
                        replies[rid] = read
                        latency[rid] = now - sent_at[rid]
    finally:
        await producer.stop()
        await consumer.stop()
    return replies, latency


def ask_many(records: Sequence[Envelope], timeout_s: float = 60.0,
             **kw) -> tuple[dict[str, BaseModel], dict[str, float]]:
    return asyncio.run(publish_and_collect(records, timeout_s=timeout_s, **kw))


async def read_topic(topic: str, *, since: dict[int, int] | None = None, settings: Settings | None = None,
                     timeout_s: float = 60.0) -> list[ConsumerRecord]:
    """Every message on ``topic`` when called (from ``since`` offsets per partition), as aiokafka records: read up
    to each partition's end offset, not until the broker goes quiet, which a busy broker does mid-topic. Raises
    ``TimeoutError`` when the end is not reached within ``timeout_s``."""
    settings = settings or get_settings()
    consumer = paced_consumer(settings, auto_offset_reset="earliest")
    await consumer.start()
    tps = await partitions_of(consumer, settings, topic)
    consumer.assign(tps)
    out: list[ConsumerRecord] = []
    try:
        starts, ends = await consumer.beginning_offsets(tps), await consumer.end_offsets(tps)
        for tp in tps:  # never before the log's start: a fetch there is reset, to the end by default
            consumer.seek(tp, max((since or {}).get(tp.partition, 0), starts[tp]))
        deadline = time.monotonic() + timeout_s
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: the end offsets {ends} not reached in {timeout_s:g} s")
            for messages in (await consumer.getmany(timeout_ms=1000)).values():
                out.extend(messages)
        return out
    finally:
        await consumer.stop()
