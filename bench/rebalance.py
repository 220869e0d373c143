"""What a rebalance costs: one worker answers a steady stream of questions; a second worker joins the consumer group
a third of the way in and leaves (stopped gracefully) at two thirds.

Printed: how long the second worker took from start to ready (its model load, then the group join), the longest
pause between two answers around each rebalance against the longest in steady state, p50 / max latency of the
questions sent in each phase, and how many questions were lost (must be 0). Distinct questions over
../shared/corpus, extractive backend, relevance model on; the second worker runs one torch thread.

    REBALANCE_SECONDS=120 REBALANCE_RATE=0.4 python -m bench.rebalance
"""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
import threading
import time
from pathlib import Path

from citestream.config import get_settings
from citestream.topics import partitions

from ._support import Worker, ensure_corpus, percentile, unique_question
from .soak import Tally, drive

SECONDS = float(os.environ.get("REBALANCE_SECONDS", "120"))
RATE = float(os.environ.get("REBALANCE_RATE", "0.4"))


def _second_worker(folder: Path, marks: dict, started: float) -> None:
    """Start a second worker at a third of the run, stop it at two thirds; record when each step happened."""
    time.sleep(max(0.0, started + SECONDS / 3 - time.monotonic()))
    marks["join_start"] = time.monotonic()
    try:
        worker = Worker(folder / "worker-b.log", env={"OMP_NUM_THREADS": "1"})
    except Exception as exc:  # reported by main once the run is over
        marks["failed"] = exc
        return
    marks["join_ready"] = time.monotonic()
    time.sleep(max(0.0, started + 2 * SECONDS / 3 - time.monotonic()))
    marks["leave_start"] = time.monotonic()
    worker.stop()
    marks["leave_done"] = time.monotonic()


def _phase(tally: Tally, since: float, until: float) -> dict:
    """Latencies of the questions sent in [since, until), and the longest pause between answers arriving then."""
    sent = {k: t for k, t in tally.sent_at.items() if since <= t < until}
    latencies = [tally.latency[k] for k in sent if k in tally.latency]
    arrivals = sorted(tally.sent_at[k] + tally.latency[k] for k in tally.latency
                      if since <= tally.sent_at[k] + tally.latency[k] < until)
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    return {"sent": len(sent), "answered": len(latencies), "p50_s": percentile(latencies, 50),
            "max_s": max(latencies, default=float("nan")), "longest_pause_s": max(gaps, default=float("nan"))}


def main() -> None:
    from citestream.cli import main as cli

    settings = get_settings()
    cli(["migrate"])
    cli(["topics", "create"])
    ensure_corpus()
    folder = Path(tempfile.mkdtemp(prefix="citestream-rebalance-"))
    first = Worker(folder / "worker-a.log")
    marks: dict = {}
    try:
        asyncio.run(drive(settings, None, 0, 4, "rebalance-warm", unique_question))
        started = time.monotonic()
        second = threading.Thread(target=_second_worker, args=(folder, marks, started))
        second.start()
        tally = asyncio.run(drive(settings, RATE, SECONDS, None, "rebalance", unique_question))
        second.join()
    finally:
        first.stop()
    if "failed" in marks:
        raise SystemExit(f"the second worker did not start: {marks['failed']} (its log: {folder / 'worker-b.log'})")
    end = max(t + tally.latency.get(k, 0.0) for k, t in tally.sent_at.items()) + 1
    phases = {
        "one worker": _phase(tally, started, marks["join_start"]),
        "second joining (start to ready + 15 s)": _phase(tally, marks["join_start"], marks["join_ready"] + 15),
        "two workers": _phase(tally, marks["join_ready"] + 15, marks["leave_start"]),
        "second leaving (stop + 15 s)": _phase(tally, marks["leave_start"], marks["leave_done"] + 15),
        "one worker again": _phase(tally, marks["leave_done"] + 15, end),
    }
    lost = len(tally.sent_at) - len(tally.latency)
    print(f"\nrebalance: {RATE} q/s for {SECONDS:.0f} s, distinct questions over ../shared/corpus, "
          f"{partitions('questions', settings.topic_partitions)} partitions on the question path")
    print(f"second worker: start to ready {marks['join_ready'] - marks['join_start']:.1f} s (model load and group "
          f"join); graceful stop {marks['leave_done'] - marks['leave_start']:.1f} s")
    print(f"{'phase':<42}{'sent':>6}{'answered':>10}{'p50 s':>8}{'max s':>8}{'longest pause s':>17}")
    for name, p in phases.items():
        print(f"{name:<42}{p['sent']:>6}{p['answered']:>10}{p['p50_s']:>8.2f}{p['max_s']:>8.2f}"
              f"{p['longest_pause_s']:>17.2f}")
    print(f"sent {len(tally.sent_at)}, answered {len(tally.latency)}, lost {lost}, "
          f"duplicates removed {tally.duplicates}")
    if lost:
        raise SystemExit(f"LOST {lost} questions")


if __name__ == "__main__":
    main()
