"""An empty fetch waits before the next one, so an idle worker does not spin against a broker that answers at once.

A Kafka broker holds a fetch until data arrives or ``fetch_max_wait_ms`` passes; the embedded noida broker answers
an empty fetch at once, and aiokafka's fetch loop then sends the next one straight away. Seen with py-spy on an
idle worker (docs/infrastructure.md): 1.7 cores busy encoding and decoding empty fetches, stealing the CPU that
the tests' and benchmarks' other workers need. After an empty answer that came back sooner than
``min_cycle_s``, the fetch task sleeps the rest of that time; its node stays in flight, so aiokafka sends no other
fetch to it meanwhile. Against a broker that honours the wait the answer already took longer and nothing sleeps.
The price is at most ``min_cycle_s`` more latency per hop for a record that arrives just after an empty answer.
"""

from __future__ import annotations

import asyncio
import time

from aiokafka.consumer.fetcher import Fetcher

_original = Fetcher._proc_fetch_request
_min_cycle_s = 0.0


def apply(min_cycle_s: float) -> None:
    """Patch aiokafka's fetcher once per process; later calls only change the cycle (0 turns the wait off)."""
    global _min_cycle_s
    _min_cycle_s = min_cycle_s
    if Fetcher._proc_fetch_request is not _original:
        return

    async def proc_fetch_request(self, assignment, node_id, request):
        started = time.monotonic()
        has_data = await _original(self, assignment, node_id, request)
        rest = _min_cycle_s - (time.monotonic() - started)
        if not has_data and rest > 0 and assignment.active:
            try:
                await asyncio.sleep(rest)
            except asyncio.CancelledError:  # close() or a new assignment: aiokafka's own fetch returns False too
                return False
        return has_data

    Fetcher._proc_fetch_request = proc_fetch_request  # type: ignore[method-assign]
