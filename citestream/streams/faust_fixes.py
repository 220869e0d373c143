"""Two corrections to faust-streaming 0.15.3's consumer, so a restarted worker never skips a record.

Found with a kill -9 experiment (docs/security.md, "Recovery"): when a worker
gets its partitions, faust's recovery *resumes* the stream partitions and only
*then* seeks them to the committed offsets (``Recovery.on_recovery_completed``
and ``_resume_streams``). Records fetched in that window are handed out while
the seek resets faust's read offsets, and faust's bookkeeping then loses some:
the rest of the early batch arrives above the freshly reset read offset, which
faust takes for a hole in a compacted topic (``Consumer._add_gap``) and counts
as processed, so the commit moves past records no agent ever saw, and the same
records fetched again after the seek are dropped as "already read". In the
experiment 57 of 800 records were never processed; in the fault test the
questions waited for the reconciler's 120 s.

The corrections, at the cause:

1. The stream partitions stay paused until the seek has finished: during those
   two recovery steps ``resume_partitions`` is deferred and ``perform_seek``
   resumes them once their position is the committed offset.
2. ``_add_gap`` counts nothing as processed. citestream's topics are neither
   compacted nor transactional, so their offsets are dense and a hole can only
   be a race like the one above; the commit then waits for the missing record
   instead of skipping it (at-least-once: the stages are idempotent), and the
   log says so.

Remove this module when faust-streaming seeks before it resumes (compare its
issues 216 and 221).
"""

from __future__ import annotations

import functools
import logging

from faust.tables.recovery import Recovery
from faust.transport.consumer import Consumer

log = logging.getLogger("citestream.streams.faust_fixes")

_applied = False


def apply() -> None:
    """Patch faust once per process (idempotent)."""
    global _applied
    if _applied:
        return
    _applied = True
    original_resume, original_seek = Consumer.resume_partitions, Consumer.perform_seek

    def resume_partitions(self, tps) -> None:
        deferred = getattr(self, "_citestream_deferred", None)
        if deferred is not None:  # inside a recovery step: wait for the seek
            deferred.update(tps)
            return
        original_resume(self, tps)

    async def perform_seek(self) -> None:
        await original_seek(self)
        deferred = getattr(self, "_citestream_deferred", None)
        if deferred:
            self._citestream_deferred = None
            original_resume(self, deferred)

    def seek_before_resume(step):
        @functools.wraps(step)
        async def wrapper(self, generation_id: int = 0) -> None:
            consumer = self.app.consumer
            consumer._citestream_deferred = set()
            try:
                await step(self, generation_id)
            finally:  # no seek happened (another rebalance, nothing assigned): resume as faust would have
                deferred, consumer._citestream_deferred = consumer._citestream_deferred, None
                if deferred:
                    original_resume(consumer, deferred)

        return wrapper

    async def add_gap(self, tp, offset_from: int, offset_to: int) -> None:
        log.warning("offsets %d..%d of %s were not delivered; the commit waits for them", offset_from,
                    offset_to - 1, tp)

    Consumer.resume_partitions = resume_partitions
    Consumer.perform_seek = perform_seek
    Consumer._add_gap = add_gap
    Recovery.on_recovery_completed = seek_before_resume(Recovery.on_recovery_completed)
    Recovery._resume_streams = seek_before_resume(Recovery._resume_streams)
