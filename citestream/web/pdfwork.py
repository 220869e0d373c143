"""The page's PDF work (page images, chunk boxes) on threads of its own, bounded in number and in time.

On the default thread pool, six requests waiting for a slow render held every thread, and the page's database
reads waited behind them without end. Here at most ``pdf_workers`` threads render (one child each), at most
``pdf_jobs`` jobs run or wait (past that: ``Busy``, a 503), and a request waits at most the children's wall-time
limit and a margin (``TooSlow``, a 504; the job itself ends when its child is stopped).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class Busy(Exception):
    """As many PDF jobs as the page takes are running or waiting."""


class TooSlow(Exception):
    """The job did not finish within the wait; it ends on its own when its child is stopped."""


class PdfWork:
    def __init__(self, threads: int, most: int, wait_s: float):
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="page-pdf")
        self.most, self.wait_s = most, wait_s
        self.jobs = 0  # running or waiting now
        self.started = 0
        self._lock = threading.Lock()

    def _done(self, _future) -> None:
        with self._lock:
            self.jobs -= 1

    async def run(self, fn: Callable[..., T], *args) -> T:
        with self._lock:
            if self.jobs >= self.most:
                raise Busy(f"{self.most} page images and chunk boxes are being made; try again shortly")
            self.jobs += 1
            self.started += 1
        future = self._pool.submit(fn, *args)
        future.add_done_callback(self._done)  # counted until the thread is free, not until the wait ends
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.wait_s)
        except TimeoutError:
            raise TooSlow(f"the PDF took more than {self.wait_s:g} s") from None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
