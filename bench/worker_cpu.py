"""Where a worker's CPU goes through Kafka (issue 53, item 1): one worker on a broker of its own answers the qa-v2 test
questions published at once, and the CPU each process spent is read from /proc: the worker's, the broker's, this
client's, and how busy the machine was. Beside it, what the same worker spends idle (its paced empty fetches).

With ``BENCH_WORKER_SPY=1`` and py-spy installed (``pip install py-spy``; it needs ptrace), the worker's Python is
sampled only while a thread holds the GIL (``py-spy record --gil``), and that time is split by the part of the flow
it was in: what runs under the GIL is what the two cores cannot share, while the model passes release it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from citestream.config import get_settings
from citestream.infra.procfs import machine_cpu, named_threads_cpu, process_cpu
from citestream.ops.client import ask_many
from citestream.relevance.onnx_runtime import LANE

from ._support import Worker, ensure_corpus, fresh_broker
from .throughput import N, _events, _row

SPY = os.environ.get("BENCH_WORKER_SPY") == "1"
IDLE_S = 10.0
PARTS = ("RequestTracker", "unsupported_premise", "search_chunks", "retrieve_facts", "filter_facts", "assemble_prompt",
         "generate_answer", "validate_answer", "StageAgent.decode", "StageAgent.publish", "Fetcher", "AIOKafka",
         "Sender", "fallback_rate")
"""Frames that name a part of the flow, looked for in this order (a stack is counted under the first it holds)."""


def broker_pid(folder: Path) -> int | None:
    """The embedded broker whose data folder is ``folder``."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "noida" in cmdline and str(folder) in cmdline:
                return int(entry.name)
    return None


def gil_parts(raw: Path) -> Counter:
    """Samples of a ``py-spy --format raw`` file by the first part of the flow each stack holds."""
    parts: Counter = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        part = next((p for p in PARTS if p in stack), "event loop, other" if "_run_once" in stack else "other")
        parts[part] += int(count)
    return parts


def main() -> None:
    ensure_corpus()
    folder = Path(tempfile.mkdtemp(prefix="citestream-bench-cpu-"))
    spy_bin = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with fresh_broker(folder) as broker:
        settings = get_settings().model_copy(update={"broker_url": broker.url})
        worker = Worker(folder / "worker.log", env={"CITESTREAM_BROKER_URL": broker.url})
        try:
            ask_many(_events("warmcpu", warm=True)[:2], timeout_s=300, settings=settings)
            pids = {"worker": worker.proc.pid, "broker": broker_pid(folder), "client": os.getpid()}
            cpu = {k: process_cpu(p) for k, p in pids.items() if p}
            time.sleep(IDLE_S)
            idle = {k: (process_cpu(p) - cpu[k]) / IDLE_S for k, p in pids.items() if p}
            spy = None
            if SPY and Path(spy_bin).exists():
                spy = subprocess.Popen([spy_bin, "record", "--pid", str(pids["worker"]), "--gil", "--rate", "50",
                                        "--nonblocking", "--format", "raw", "-o", str(folder / "gil.raw")],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)
            cpu = {k: process_cpu(p) for k, p in pids.items() if p}
            lanes = named_threads_cpu(pids["worker"], LANE)
            busy0, idle0 = machine_cpu()
            started = time.monotonic()
            replies, latency = ask_many(_events("cpu"), timeout_s=max(300, N * 5), settings=settings)
            elapsed = time.monotonic() - started
            spent = {k: process_cpu(p) - cpu[k] for k, p in pids.items() if p}
            lanes = named_threads_cpu(pids["worker"], LANE) - lanes
            busy1, idle1 = machine_cpu()
            if spy:
                spy.send_signal(2)
                spy.wait(60)
        finally:
            worker.stop()
        row = _row(list(latency.values()), elapsed)
        print(f"\none worker through Kafka, {len(replies)} of {N} qa-v2 test questions at once: {row['qps']:.1f} q/s, "
              f"p50 {row['p50_ms']:.0f} ms, p99 {row['p99_ms']:.0f} ms, {elapsed:.1f} s")
        print("CPU ms a question: " + ", ".join(f"{k} {v * 1000 / N:.0f}" for k, v in spent.items())
              + f"; the machine {(busy1 - busy0) / ((busy1 - busy0) + (idle1 - idle0)):.0%} busy "
              f"(worker {spent['worker'] / elapsed:.2f} cores)")
        print(f"the judge's ONNX runs (its lane threads) {lanes / spent['worker']:.1%} of the worker's CPU "
              f"({lanes * 1000 / N:.0f} ms a question; the embedders' passes and tokenizing run on other threads)")
        print("idle, share of a core: " + ", ".join(f"{k} {v:.1%}" for k, v in idle.items()))
        raw = folder / "gil.raw"
        if spy and raw.exists():
            parts = gil_parts(raw)
            held = sum(parts.values()) / 50
            print(f"the worker's threads held the GIL {held:.1f} s of {elapsed:.1f} s "
                  f"({held * 1000 / N:.0f} ms a question); by part:")
            for part, samples in parts.most_common():
                print(f"  {part:<24}{samples / 50 * 1000 / N:>6.1f} ms a question")
        elif SPY:
            print(f"BENCH_WORKER_SPY=1 but no py-spy at {spy_bin}: no GIL profile")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
