"""Questions/s and p50/p99 latency through all five agents, beside the same stage functions in-process.

Both runs answer the same N questions over the ingested ../shared/corpus in one
process of this benchmark; the ratio stream/in-process is the cost of the
topics (serialisation, broker round trips, consumer scheduling).
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

from citestream.client import ask_many
from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.pipeline import answer_inprocess
from citestream.deps import Deps

from ._support import Worker, ensure_corpus, percentile, questions

N = int(os.environ.get("BENCH_QUESTIONS", "500"))


def _events(tag: str) -> list[QuestionEvent]:
    return [QuestionEvent(request_id=f"bench-{tag}-{uuid.uuid4().hex[:10]}-{i}", question=q)
            for i, q in enumerate(questions(N))]


def run_inprocess() -> dict:
    deps = Deps(get_settings())
    deps.warm()
    latencies = []
    started = time.monotonic()
    for event in _events("inproc"):
        t0 = time.monotonic()
        answer_inprocess(event, deps)
        latencies.append(time.monotonic() - t0)
    elapsed = time.monotonic() - started
    return {"answered": len(latencies), "seconds": elapsed, "qps": len(latencies) / elapsed,
            "p50_ms": percentile(latencies, 50) * 1000, "p99_ms": percentile(latencies, 99) * 1000}


def run_stream() -> dict:
    log = Path(tempfile.mkdtemp(prefix="citestream-bench-")) / "worker.log"
    worker = Worker(log)
    try:
        ask_many(_events("warm")[:5], timeout_s=120)  # first records pay for partition assignment
        events = _events("stream")
        started = time.monotonic()
        replies, latency = ask_many(events, timeout_s=max(300, N * 2))
        elapsed = time.monotonic() - started
    finally:
        worker.stop()
    values = list(latency.values())
    return {"answered": len(replies), "seconds": elapsed, "qps": len(replies) / elapsed,
            "p50_ms": percentile(values, 50) * 1000, "p99_ms": percentile(values, 99) * 1000}


def main() -> None:
    ensure_corpus()
    inproc = run_inprocess()
    stream = run_stream()
    print(f"\n{N} questions over ../shared/corpus, extractive backend, one worker, 2 cores")
    print(f"{'path':<28}{'answered':>9}{'q/s':>9}{'p50 ms':>10}{'p99 ms':>10}")
    for name, r in (("in-process stage functions", inproc), ("five agents via Kafka", stream)):
        print(f"{name:<28}{r['answered']:>9}{r['qps']:>9.1f}{r['p50_ms']:>10.0f}{r['p99_ms']:>10.0f}")
    print(f"stream / in-process throughput ratio: {stream['qps'] / inproc['qps']:.2f}")
    print("(stream latency is measured from publish with all questions sent at once, so it includes queueing)")


if __name__ == "__main__":
    main()
