"""Soak: steady questions at half the measured maximum throughput for SOAK_SECONDS (default 300).

Prints answered, lost (must be 0), duplicates removed by key, p50/p99 latency, each stage's time and the worker's
RSS at start and end. One worker process, the database and topic prefix from the usual CITESTREAM_* settings, the
extractive backend, the relevance model on.

By default the questions are distinct, over ../shared/corpus (issue 16: p99 at half the maximum rate with the
model's full work on every question); the maximum comes from a burst of SOAK_CALIBRATION (60) questions.
``SOAK_CORPUS=0`` asks four smoke questions over and over instead, which the relevance model's score cache then
answers: a test of the plumbing alone (nothing lost, memory flat).

    python -m bench.soak      # SOAK_SECONDS, SOAK_CALIBRATION; SOAK_RATE=<q/s> skips the calibration burst
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

from aiokafka import AIOKafkaProducer

from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.ops.client import paced_consumer, partitions_of

from ._support import Worker, ensure_corpus, percentile, unique_question

SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", "300"))
CALIBRATION_QUESTIONS = int(os.environ.get("SOAK_CALIBRATION", "60"))
DRAIN_S = float(os.environ.get("SOAK_DRAIN_SECONDS", "180"))
ON_CORPUS = os.environ.get("SOAK_CORPUS", "1") != "0"

QUESTIONS = [
    "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?",
    "What complete remission rates has CD19 CAR-T cell therapy achieved in ALL?",
    "What does lecanemab target in early Alzheimer's disease?",
    "What is the boiling point of liquid nitrogen at sea level?",
]


def question(i: int, tag: str) -> str:
    if ON_CORPUS:  # never the same text twice: the score cache must not answer for the model
        return unique_question(i, tag)
    return QUESTIONS[i % len(QUESTIONS)]


def prepare() -> None:
    """Migrated database, topics, and the smoke documents or the corpus (unchanged documents are skipped)."""
    from citestream.cli import main
    from citestream.ops.demo_pdfs import smoke_dataset
    from citestream.embedding import get_embedder
    from citestream.ingest import from_text, ingest_document
    from citestream.store import ChunkStore, engine_for

    main(["migrate"])
    main(["topics", "create"])
    if ON_CORPUS:
        ensure_corpus()
        return
    store, embedder = ChunkStore(engine_for()), get_embedder()
    for doc in smoke_dataset()["documents"]:
        ingest_document(from_text(doc["docId"], doc["text"], doc["title"], doc["source"], doc["metadata"]),
                        store, embedder)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Tally:
    """First answer per key (latency from its send), and how many copies a key-deduplicating consumer dropped."""

    def __init__(self) -> None:
        self.sent_at: dict[str, float] = {}
        self.latency: dict[str, float] = {}
        self.duplicates = 0

    def seen(self, key: str, now: float) -> None:
        if key not in self.sent_at:
            return
        if key in self.latency:
            self.duplicates += 1
        else:
            self.latency[key] = now - self.sent_at[key]


async def _tail(settings, tally: Tally, stop: asyncio.Event) -> None:
    consumer = paced_consumer(settings)  # a spinning reader would take the worker's CPU
    await consumer.start()
    try:
        tps = await partitions_of(consumer, settings, "answers")
        consumer.assign(tps)
        await consumer.seek_to_end(*tps)
        for tp in tps:
            await consumer.position(tp)
        stop_seen = None
        while True:
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                now = time.monotonic()
                for m in messages:
                    tally.seen(m.key.decode(), now)
            if stop.is_set():
                stop_seen = stop_seen or time.monotonic()
                if time.monotonic() - stop_seen > 3:  # late duplicates still count
                    return
    finally:
        await consumer.stop()


async def drive(settings, rate: float | None, seconds: float, count: int | None, tag: str,
                ask: Callable[[int, str], str] = question) -> Tally:
    """Publish at ``rate`` q/s for ``seconds`` (or ``count`` at once); wait until all are answered or DRAIN_S.
    ``ask(i, tag)`` is the ``i``-th question's text."""
    tally, stop = Tally(), asyncio.Event()
    tail = asyncio.create_task(_tail(settings, tally, stop))
    await asyncio.sleep(1)
    producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all", linger_ms=5)
    await producer.start()
    try:
        started, i = time.monotonic(), 0
        while (count is not None and i < count) or (count is None and time.monotonic() - started < seconds):
            q = QuestionEvent(request_id=f"soak-{tag}-{uuid.uuid4().hex[:10]}-{i}", question=ask(i, tag))
            tally.sent_at[q.request_id] = time.monotonic()
            await producer.send(settings.topic("questions"), value=q.model_dump_json().encode(),
                                key=q.request_id.encode())
            i += 1
            if rate:
                await asyncio.sleep(max(0.0, started + i / rate - time.monotonic()))
        await producer.flush()
    finally:
        await producer.stop()
    deadline = time.monotonic() + DRAIN_S
    while len(tally.latency) < len(tally.sent_at) and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    stop.set()
    await tail
    return tally


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stage_latency(port: int) -> dict[tuple[str, str], float]:
    """The worker's stage-latency histogram as {(stage, series): value}: series ``sum``, ``count`` and each bucket's
    ``le`` (cumulative counts, as Prometheus keeps them)."""
    from prometheus_client.parser import text_string_to_metric_families

    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(body):
        if family.name != "citestream_stage_latency_seconds":
            continue
        for sample in family.samples:
            series = sample.name.rsplit("_", 1)[-1]
            out[(sample.labels["stage"], sample.labels.get("le", series))] = sample.value
    return out


def print_stages(before: dict, after: dict) -> None:
    """Per stage over the steady phase: records, mean time in the stage function, and how many took over 0.5 / 1 s
    (from the histogram's buckets): where the tail of a question's latency is spent, beside the hops."""
    print("  per stage (the stage function's time; the rest of a question's latency is hops and queueing):")
    for stage in sorted({s for s, _ in after}):
        delta = {k: after[(s, k)] - before.get((s, k), 0.0) for s, k in after if s == stage}
        count = delta.get("count", 0)
        if not count:
            continue
        print(f"    {stage:<12} {count:>5.0f} records, mean {delta['sum'] / count * 1000:7.1f} ms, "
              f"over 0.5 s {count - delta['0.5']:>4.0f}, over 1 s {count - delta['1.0']:>4.0f}")


def main() -> None:
    settings = get_settings()
    prepare()
    metrics_port = free_port()
    worker = Worker(Path(tempfile.mkdtemp(prefix="citestream-soak-")) / "worker.log",
                    env={"CITESTREAM_METRICS_PORT": str(metrics_port)})
    try:
        asyncio.run(drive(settings, None, 0, 5, "warm"))
        if os.environ.get("SOAK_RATE"):
            max_qps, rate = float("nan"), float(os.environ["SOAK_RATE"])
        else:
            burst = asyncio.run(drive(settings, None, 0, CALIBRATION_QUESTIONS, "max"))
            max_qps = len(burst.latency) / max(burst.latency.values())  # all sent at once: last answer = total time
            rate = max_qps / 2
        rss_start = rss_mb(worker.proc.pid)
        stages_before = stage_latency(metrics_port)
        samples = [rss_start]
        tally_box: dict = {}

        async def soak():
            async def sample():
                while True:
                    await asyncio.sleep(30)
                    samples.append(rss_mb(worker.proc.pid))
            sampler = asyncio.create_task(sample())
            tally_box["t"] = await drive(settings, rate, SOAK_SECONDS, None, "steady")
            sampler.cancel()

        asyncio.run(soak())
        rss_end = rss_mb(worker.proc.pid)
        stages_after = stage_latency(metrics_port)
    finally:
        worker.stop()
    tally = tally_box["t"]
    values = list(tally.latency.values())
    figures = {
        "seconds": SOAK_SECONDS, "max_qps": round(max_qps, 2), "rate_qps": round(rate, 2),
        "sent": len(tally.sent_at), "answered": len(tally.latency), "lost": len(tally.sent_at) - len(tally.latency),
        "duplicates_removed": tally.duplicates, "p50_ms": round(percentile(values, 50) * 1000, 1),
        "p99_ms": round(percentile(values, 99) * 1000, 1), "rss_start_mb": round(rss_start, 1),
        "rss_end_mb": round(rss_end, 1), "rss_max_mb": round(max(samples + [rss_end]), 1),
    }
    print(f"\nsoak: {SOAK_SECONDS:.0f} s of steady questions at {rate:.1f} q/s "
          f"(half the measured maximum {max_qps:.1f} q/s), one worker, "
          f"{'distinct questions over ../shared/corpus' if ON_CORPUS else 'smoke corpus, four questions'}, "
          "extractive backend")
    for name in ("sent", "answered", "lost", "duplicates_removed", "p50_ms", "p99_ms", "rss_start_mb", "rss_end_mb",
                 "rss_max_mb"):
        print(f"  {name:<20}{figures[name]}")
    print_stages(stages_before, stages_after)
    print(json.dumps(figures))
    if figures["lost"]:
        raise SystemExit(f"LOST {figures['lost']} questions")


if __name__ == "__main__":
    main()
