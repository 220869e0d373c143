"""Three corrections to faust-streaming 0.15.3's consumer, so a restarted worker neither skips nor drops records.

Found with a kill -9 experiment (docs/security.md, "Recovery"), logged record by
record. When a worker gets its partitions, faust's recovery resumes the stream
partitions and then seeks them to the committed offsets
(``Recovery.on_recovery_completed``) while the fetcher keeps running. A batch
fetched before the seek is still being handed out after it, and faust's
bookkeeping turns that into loss:

* the stale batch arrives above the freshly reset read offset, which faust
  takes for a hole in a compacted topic (``Consumer._add_gap``): the "missing"
  offsets count as processed and the commit moves past records no agent saw;
* the stale batch leaves the read offset high, so the records the broker sends
  again after the seek are dropped as already read (``_drain_messages``).

Seen: a new worker processed none of 451 of 800 records after a kill -9; in the
fault test, questions waited for the reconciler's 120 s.

The corrections:

1. ``perform_seek`` stops the flow, waits until no fetch is under way (a fetch
   that returns while the flow is stopped is dropped and re-read by faust
   itself), seeks, forgets the acks and holes of the old position, and resumes
   the flow. No stale record is handed out after a seek.
2. ``_add_gap`` counts nothing as processed: citestream's topics are neither
   compacted nor transactional, so offsets are dense and a hole is a race like
   the one above. The commit then waits for the record (at-least-once).
3. ``_new_offset`` never commits past the committed offset's own record while it
   is unacknowledged (faust allowed a hole of exactly one there).

Remove this module once faust-streaming seeks before it hands records out
(compare its issues 216 and 221).
"""

from __future__ import annotations

import asyncio
import logging

from faust.transport.consumer import Consumer, ThreadDelegateConsumer

log = logging.getLogger("citestream.streams.faust_fixes")

_applied = False


def _fetches(consumer) -> asyncio.Condition:
    if getattr(consumer, "_citestream_fetches", None) is None:
        consumer._citestream_fetches = asyncio.Condition()
        consumer._citestream_fetching = 0
    return consumer._citestream_fetches


def apply() -> None:
    """Patch faust once per process (idempotent)."""
    global _applied
    if _applied:
        return
    _applied = True
    original_seek, original_getmany = Consumer.perform_seek, ThreadDelegateConsumer._getmany
    original_new_offset = Consumer._new_offset

    async def _getmany(self, active_partitions, timeout: float):
        fetches = _fetches(self)
        self._citestream_fetching += 1
        try:
            return await original_getmany(self, active_partitions, timeout)
        finally:
            self._citestream_fetching -= 1
            async with fetches:
                fetches.notify_all()

    async def perform_seek(self) -> None:
        flowing = self.flow_active
        if flowing:
            self.stop_flow()  # from here no record is handed out; a batch being handed out stops
        try:
            fetches = _fetches(self)
            async with fetches:
                await fetches.wait_for(lambda: self._citestream_fetching == 0)
            await original_seek(self)
            for tp in self.assignment():  # acks and holes of the old position do not hold at the new one
                self._acked.pop(tp, None)
                self._acked_index.pop(tp, None)
                self._gap.pop(tp, None)
        finally:
            if flowing:
                self.resume_flow()

    async def add_gap(self, tp, offset_from: int, offset_to: int) -> None:
        log.warning("offsets %d..%d of %s were not handed out; the commit waits for them", offset_from,
                    offset_to - 1, tp)

    def new_offset(self, tp):
        acked, committed = self._acked[tp], self._committed_offset.get(tp)
        if acked and committed is not None and min(acked) > committed and not self._gap[tp]:
            return None  # the record at the committed offset is not acknowledged yet
        return original_new_offset(self, tp)

    # Patching faust's consumer is this module's purpose (mypy refuses assignments to methods).
    ThreadDelegateConsumer._getmany = _getmany  # type: ignore[method-assign]
    Consumer.perform_seek = perform_seek  # type: ignore[method-assign]
    Consumer._add_gap = add_gap  # type: ignore[method-assign]
    Consumer._new_offset = new_offset  # type: ignore[method-assign]
