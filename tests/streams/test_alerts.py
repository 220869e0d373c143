"""Fallback-rate alerts: the rule on its own, then a real worker, real records through the real broker."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, UTC

import pytest

from citestream.models import (FALLBACK_ALERT_MESSAGE, Fact, FactsRecord, FallbackRateAlert, FallbackTick,
                               RetrievalTrace)
from citestream.streams.alerts import fallback_alert
from citestream.ops.client import read_topic
from citestream.topics import create_topics

from tests.support.common import WorkerProcess, new_request_id

THRESHOLD = 0.15


def test_rate_exactly_at_threshold_does_not_alert():
    assert fallback_alert(0, 300, answerable=20, fallback=3, threshold=THRESHOLD, min_answerable=1,
                          policy_version="v") is None


def test_rate_above_threshold_alerts_with_the_contract_message_bounds_counts_and_rate():
    alert = fallback_alert(600, 899.9, answerable=20, fallback=4, threshold=THRESHOLD, min_answerable=10,
                           policy_version="v")
    assert alert is not None
    assert alert.message == FALLBACK_ALERT_MESSAGE
    assert alert.message == ("Fallback retrieval triggered too often; check embeddings/index changes or "
                             "similarity calibration.")
    assert (alert.answerable_count, alert.fallback_count, alert.rate, alert.threshold) == (20, 4, 0.2, THRESHOLD)
    assert alert.window_start == datetime.fromtimestamp(600, UTC)
    assert alert.request_id == "fallback-rate-600"


def test_too_little_answerable_traffic_does_not_alert():
    assert fallback_alert(0, 300, answerable=3, fallback=3, threshold=THRESHOLD, min_answerable=10,
                          policy_version="v") is None
    assert fallback_alert(0, 300, answerable=0, fallback=0, threshold=THRESHOLD, min_answerable=0,
                          policy_version="v") is None


def _facts(answerable: bool, fallback: bool) -> FactsRecord:
    facts = [Fact(quote="Records must be retained.", pdf="alert-test.pdf", page=1, chunk_id="alert-test-chunk-0",
                  score=0.19 if fallback else 0.5, doc_id="alert-test")] if answerable else []
    return FactsRecord(request_id=new_request_id("alert"), policy_version="qa-v1+R2_POLICY_V1", question="q?",
                       scope="MIXED", top_k=8, facts=facts, fallback_used=fallback,
                       retrieval_trace=RetrievalTrace(stages=["semantic", "bm25"]))


async def _produce(settings, records: list, topic: str | None = None, seal: bool = True, copies: int = 1) -> None:
    """As the retrieve agent writes them: sealed with the worker's key (an unsealed record is not counted); each
    ``copies`` times byte for byte (what a local user can replay)."""
    from aiokafka import AIOKafkaProducer

    from citestream.sealing import RecordSealer

    sealer = RecordSealer.from_file(settings.record_key_path, create=True)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for r in records:
            value = sealer.payload(r) if seal else r.model_dump_json().encode()
            for _ in range(copies):
                await producer.send(topic or settings.topic("qa.facts"), key=r.request_id.encode(), value=value)
        await producer.flush()
    finally:
        await producer.stop()


async def _read_all(settings, topic: str) -> list:
    """Every record of the one-partition ``topic`` (an internal topic, outside the registry)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers, enable_auto_commit=False)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        end = (await consumer.end_offsets([tp]))[tp]
        out: list = []
        while await consumer.position(tp) < end:
            out.extend((await consumer.getmany(tp, timeout_ms=2000)).get(tp, []))
        return out
    finally:
        await consumer.stop()


@contextmanager
def _alert_worker(settings, tmp_path, window_s: int) -> Iterator[tuple[object, str, WorkerProcess]]:
    """A worker on topics of its own (other suites' ``qa.facts`` traffic of the same hour must not count in its
    window) and a fresh table state: (its settings, its repartition topic, the worker), stopped however it ends."""
    prefix = f"{settings.topic_prefix}alerts-{uuid.uuid4().hex[:8]}."
    settings = settings.model_copy(update={"topic_prefix": prefix})
    create_topics(settings.bootstrap_servers, prefix)
    app_id = f"citestream-retr-alerts-{uuid.uuid4().hex[:8]}"
    regrouped = f"{app_id}-{settings.topic('qa.facts')}-fallback-rate-repartition"
    env = {"CITESTREAM_TOPIC_PREFIX": prefix, "CITESTREAM_APP_ID": app_id,
           "CITESTREAM_FALLBACK_ALERT_WINDOW_S": str(window_s), "CITESTREAM_FALLBACK_ALERT_MIN_ANSWERABLE": "5"}
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    try:
        worker.wait_ready(timeout_s=300)  # slow on a loaded 2-core machine
        yield settings, regrouped, worker
    finally:
        worker.stop()


def _first_alerts(settings, started: float, worker: WorkerProcess) -> list[FallbackRateAlert]:
    deadline = time.monotonic() + 90
    alerts: list[FallbackRateAlert] = []
    while time.monotonic() < deadline and not alerts:
        time.sleep(2)
        alerts = _alerts_since(settings, started)
    assert alerts, f"no alert; worker log:\n{worker.log_path.read_text()[-3000:]}"
    return alerts


def _alerts_since(settings, started: float) -> list[FallbackRateAlert]:
    messages = asyncio.run(read_topic("ops.alerts", settings=settings))
    alerts = [FallbackRateAlert.model_validate_json(m.value) for m in messages]
    return [a for a in alerts if a.window_end.timestamp() >= started]


@pytest.mark.e2e
def test_fallback_rate_over_the_line_emits_one_alert_per_window(topics, database, settings, tmp_path):
    window_s = 3600
    started = time.time()
    with _alert_worker(settings, tmp_path, window_s) as (settings, regrouped, worker):
        # Below the line: answerable traffic without fallback, and fallback records that found nothing
        # (not answerable traffic, so they must not count).
        asyncio.run(_produce(settings, [_facts(True, False) for _ in range(20)] +
                             [_facts(False, True) for _ in range(6)]))
        # Nor do fallback ticks that no worker sealed, published straight to the repartition topic.
        forged = [FallbackTick(request_id=new_request_id("forged"), policy_version="v", fallback_used=True)
                  for _ in range(30)]
        asyncio.run(_produce(settings, forged, topic=regrouped, seal=False))
        time.sleep(8)
        assert not [a for a in _alerts_since(settings, started)
                    if a.window_start.timestamp() <= started < a.window_end.timestamp() + 1]
        # Over the line: 10 answerable fallbacks → 10 / 30 = 0.33 > 0.15.
        asyncio.run(_produce(settings, [_facts(True, True) for _ in range(10)]))
        _first_alerts(settings, started, worker)
        time.sleep(5)  # later records of the same window must not alert again
        alerts = _alerts_since(settings, started)
        ticks = asyncio.run(_read_all(settings, regrouped))
    # The repartition topic carries small sealed ticks of the 30 answerable records, never the records themselves.
    sealed_ticks = [FallbackTick.model_validate_json(m.value) for m in ticks if m.value.startswith(b"{")]
    assert len([t for t in sealed_ticks if t.mac]) == 30
    assert all(len(m.value) < 1024 for m in ticks)
    windows = {a.window_start for a in alerts}
    assert len(alerts) == len(windows) <= 2  # once per window (the run may straddle a window edge)
    for alert in alerts:
        assert alert.message == FALLBACK_ALERT_MESSAGE
        assert alert.rate > THRESHOLD and alert.threshold == THRESHOLD
        assert alert.rate == pytest.approx(alert.fallback_count / alert.answerable_count, abs=1e-6)
        assert 5 <= alert.answerable_count <= 30 and 1 <= alert.fallback_count <= 10
        assert alert.window_end.timestamp() - alert.window_start.timestamp() == pytest.approx(window_s, abs=1)
        assert alert.window_start.timestamp() <= time.time()


def _ticks(settings, topic: str, at_least: int, timeout_s: float = 60) -> None:
    """Wait until the repartition topic holds ``at_least`` ticks, then give the window agent a moment."""
    deadline = time.monotonic() + timeout_s
    while len(asyncio.run(_read_all(settings, topic))) < at_least and time.monotonic() < deadline:
        time.sleep(1)
    time.sleep(5)


@pytest.mark.e2e
def test_a_republished_sealed_record_counts_once_per_window(topics, database, settings, tmp_path):
    """N5: copies of one sealed ``qa.facts`` record neither dilute the rate (answerable copies) nor raise a false
    alert (fallback copies): the window counts each request id once."""
    window_s = 7 * 24 * 3600  # a week-long window: the run does not straddle its edge
    started = time.time()
    with _alert_worker(settings, tmp_path, window_s) as (settings, regrouped, worker):
        # 20 answerable requests, one of them published 11 times: 20 answerable, not 30.
        answerable = [_facts(True, False) for _ in range(20)]
        asyncio.run(_produce(settings, answerable[1:]))
        asyncio.run(_produce(settings, answerable[:1], copies=11))
        _ticks(settings, regrouped, 30)
        # One fallback request published 10 times: 1 / 21 (no alert), not 10 / 40 = 0.25.
        asyncio.run(_produce(settings, [_facts(True, True)], copies=10))
        _ticks(settings, regrouped, 40)
        assert not _alerts_since(settings, started), "copies of one sealed record raised the fallback alert"
        # Three more fallback requests: 4 / 24 = 0.167 > 0.15, the first rate over the line counted once each.
        asyncio.run(_produce(settings, [_facts(True, True) for _ in range(3)]))
        alerts = _first_alerts(settings, started, worker)
    assert [(a.answerable_count, a.fallback_count) for a in alerts] == [(24, 4)]
