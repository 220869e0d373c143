"""The uploads' room on disk, shared by every upload in flight.

Why (issue 54): the page measured the bytes on disk once, before an upload streamed, and never counted the uploads
streaming beside it, so parallel uploads each saw the whole room free and together passed the quota. Here every
chunk is reserved before it is written: the bytes on disk at the last measurement, plus every byte read by uploads
still streaming, plus uploads that landed since that measurement began, never pass ``limit``.

One page serves uploads from one event loop, but the measurement runs on a thread: a lock keeps the counts whole.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class UploadRoom:
    """``limit`` bytes for uploads; ``measure()`` says what the uploads on disk take now (the worker removes some)."""

    def __init__(self, limit: int, measure: Callable[[], int]):
        self.limit = limit
        self._measure = measure
        self._lock = threading.Lock()
        self._disk = 0
        self._streaming = 0
        self._landed: list[tuple[int, int]] = []  # (measurements begun when it landed, bytes): not yet measured
        self._begun = self._applied = 0

    async def refresh(self) -> None:
        """Measure the disk again; an upload that landed before this measurement began is in it."""
        with self._lock:
            self._begun += 1
            number = self._begun
        on_disk = await asyncio.to_thread(self._measure)
        with self._lock:
            if number > self._applied:  # an older measurement finishing late never replaces a newer one
                self._applied, self._disk = number, on_disk
                self._landed = [(n, size) for n, size in self._landed if n >= number]

    def used(self) -> int:
        with self._lock:
            return self._disk + self._streaming + sum(size for _, size in self._landed)

    def left(self) -> int:
        return max(0, self.limit - self.used())

    def take(self, size: int) -> bool:
        """Reserve ``size`` more bytes for an upload streaming now; False (nothing reserved) past the limit."""
        with self._lock:
            if self._disk + self._streaming + sum(s for _, s in self._landed) + size > self.limit:
                return False
            self._streaming += size
            return True

    def done(self, size: int, landed: bool) -> None:
        """An upload that reserved ``size`` ended: its bytes are on disk (``landed``, counted until measured) or
        gone."""
        with self._lock:
            self._streaming -= size
            if landed:
                self._landed.append((self._begun, size))
