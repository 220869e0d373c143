"""Prometheus metrics of the worker: what an operator needs to see that nothing is lost and nothing is stuck.

Names are documented in the README (Reliability). The endpoint is served by
``serve(port)`` from the worker process (``CITESTREAM_METRICS_PORT``, 0 = off).
"""

from __future__ import annotations

import logging

from prometheus_client import Counter, Gauge, Histogram, start_http_server

log = logging.getLogger("citestream.metrics")

PROCESSED = Counter("citestream_stage_processed_total", "Records a stage turned into an output record", ["stage"])
FAILED = Counter("citestream_stage_failed_total", "Valid records on which a stage raised (answered as a failure)",
                 ["stage"])
DEAD_LETTERED = Counter("citestream_stage_dead_lettered_total", "Records sent to qa.deadletter", ["stage", "reason"])
RECEIVED = Counter("citestream_stage_received_total", "Records a stage read from its source topic", ["stage"])
SKIPPED = Counter("citestream_stage_skipped_total", "Questions skipped because they already have an outcome",
                  ["stage"])
LATENCY = Histogram("citestream_stage_latency_seconds", "Time a stage function took on one record", ["stage"],
                    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
DB_RETRIES = Counter("citestream_db_retries_total", "Stage runs retried because the database was unavailable",
                     ["stage"])
DB_UP = Gauge("citestream_database_up", "1 while the last database call succeeded, 0 during an outage")
FALLBACK = Counter("citestream_retrieval_fallback_total", "Questions answered from the fallback similarity floor")
OUTCOMES = Counter("citestream_outcomes_total", "Terminal outcomes written to answers", ["outcome"])
REDRIVEN = Counter("citestream_reconciler_redriven_total", "Questions the reconciler re-published")
PENDING = Gauge("citestream_reconciler_pending", "Questions seen on `questions` without an outcome yet")
MODEL_BATCH_ITEMS = Histogram("citestream_model_batch_items",
                              "Calls served by one model pass (batching across questions)", ["model"],
                              buckets=(1, 2, 3, 4, 6, 8, 12, 16))
CONSUMER_LAG = Gauge("citestream_consumer_lag", "Highwater minus committed offset per topic partition",
                     ["topic", "partition"])


def serve(port: int, host: str = "127.0.0.1") -> bool:
    """Start the /metrics HTTP endpoint on ``host:port``; returns False when disabled (port 0) or the port is taken.

    Loopback by default (``CITESTREAM_METRICS_HOST``): the metrics name stages, topics and counts, for the
    operator's scraper, not the network; a container that is scraped from outside sets ``0.0.0.0``.

    A taken port (a second worker on the same host with the same setting) must
    not stop the worker from answering: it runs on without an endpoint and says so.
    """
    if port <= 0:
        return False
    try:
        start_http_server(port, addr=host)
    except OSError as exc:
        log.error("metrics port %d unavailable (%s): this worker runs without a /metrics endpoint", port, exc)
        return False
    log.info("metrics on http://%s:%d/metrics", host, port)
    return True


def sample_consumer_lag(admin, consumer, group: str) -> None:
    """Set ``citestream_consumer_lag`` per partition: end offset minus the group's committed offset.

    Only as good as the broker's ListOffsets: right on Apache Kafka and noida-db,
    too low on Tansu (../shared/INFRA.md). ``admin`` is a kafka-python
    KafkaAdminClient, ``consumer`` a group-less KafkaConsumer.
    """
    committed = admin.list_group_offsets(group).get(group, {})
    if not committed:
        return
    ends = consumer.end_offsets(list(committed))
    for tp, meta in committed.items():
        offset = getattr(meta, "offset", meta)
        if offset is not None and offset >= 0 and tp in ends:
            CONSUMER_LAG.labels(tp.topic, str(tp.partition)).set(max(0, ends[tp] - offset))
