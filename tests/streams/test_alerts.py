"""Fallback-rate alerts: the rule on its own, then a real worker, real records through the real broker."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime, UTC

import pytest

from citestream.models import FALLBACK_ALERT_MESSAGE, Fact, FactsRecord, FallbackRateAlert, RetrievalTrace
from citestream.streams.alerts import fallback_alert
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


async def _produce(settings, records: list[FactsRecord]) -> None:
    """As the retrieve agent writes them: sealed with the worker's key (an unsealed record is not counted)."""
    from aiokafka import AIOKafkaProducer

    from citestream.sealing import RecordSealer

    sealer = RecordSealer.from_file(settings.record_key_path, create=True)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for r in records:
            await producer.send(settings.topic("qa.facts"), key=r.request_id.encode(), value=sealer.payload(r))
        await producer.flush()
    finally:
        await producer.stop()


def _alerts_since(settings, started: float) -> list[FallbackRateAlert]:
    from citestream.ops.client import read_topic

    messages = asyncio.run(read_topic("ops.alerts", settings=settings))
    alerts = [FallbackRateAlert.model_validate_json(m.value) for m in messages]
    return [a for a in alerts if a.window_end.timestamp() >= started]


@pytest.mark.e2e
def test_fallback_rate_over_the_line_emits_one_alert_per_window(topics, database, settings, tmp_path):
    window_s = 3600
    # Own topics: other suites' qa.facts traffic of the same hour must not count in this window.
    prefix = f"{settings.topic_prefix}alerts-{uuid.uuid4().hex[:8]}."
    settings = settings.model_copy(update={"topic_prefix": prefix})
    create_topics(settings.bootstrap_servers, prefix)
    env = {
        "CITESTREAM_TOPIC_PREFIX": prefix,
        "CITESTREAM_APP_ID": f"citestream-retr-alerts-{uuid.uuid4().hex[:8]}",  # fresh table state each run
        "CITESTREAM_FALLBACK_ALERT_WINDOW_S": str(window_s),
        "CITESTREAM_FALLBACK_ALERT_MIN_ANSWERABLE": "5",
    }
    started = time.time()
    worker = WorkerProcess(tmp_path / "worker.log", env=env)
    try:
        worker.wait_ready(timeout_s=300)  # slow on a loaded 2-core machine
        # Below the line: answerable traffic without fallback, and fallback records that found nothing
        # (not answerable traffic, so they must not count).
        asyncio.run(_produce(settings, [_facts(True, False) for _ in range(20)] +
                             [_facts(False, True) for _ in range(6)]))
        time.sleep(8)
        assert not [a for a in _alerts_since(settings, started)
                    if a.window_start.timestamp() <= started < a.window_end.timestamp() + 1]
        # Over the line: 10 answerable fallbacks → 10 / 30 = 0.33 > 0.15.
        asyncio.run(_produce(settings, [_facts(True, True) for _ in range(10)]))
        deadline = time.monotonic() + 90
        alerts: list[FallbackRateAlert] = []
        while time.monotonic() < deadline and not alerts:
            time.sleep(2)
            alerts = _alerts_since(settings, started)
        assert alerts, f"no alert; worker log:\n{worker.log_path.read_text()[-3000:]}"
        time.sleep(5)  # later records of the same window must not alert again
        alerts = _alerts_since(settings, started)
    finally:
        worker.stop()
    windows = {a.window_start for a in alerts}
    assert len(alerts) == len(windows) <= 2  # once per window (the run may straddle a window edge)
    for alert in alerts:
        assert alert.message == FALLBACK_ALERT_MESSAGE
        assert alert.rate > THRESHOLD and alert.threshold == THRESHOLD
        assert alert.rate == pytest.approx(alert.fallback_count / alert.answerable_count, abs=1e-6)
        assert 5 <= alert.answerable_count <= 30 and 1 <= alert.fallback_count <= 10
        assert alert.window_end.timestamp() - alert.window_start.timestamp() == pytest.approx(window_s, abs=1)
        assert alert.window_start.timestamp() <= time.time()
