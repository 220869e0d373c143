"""The parent's side: a few child processes that open PDFs, one caller each at a time, replaced when they fail.

A child is started on first use and kept for the next PDF (starting Python and pdfium costs a few tenths of a
second; reusing it keeps ingest as fast as parsing in process). A child that refused a PDF, died, or ran past the
wall time is killed and a fresh one takes its place at the next request, so nothing a hostile PDF left in a
child's memory meets the next PDF. The child gets the PDF's bytes (read and checked by the parent), an
environment without credentials, and no files.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import select
import signal
import subprocess
import sys
import time
from functools import lru_cache
from typing import Any

from ..config import Settings, get_settings
from . import frames
from .budget import PdfLimits, PdfRejected

_CHILD_ENV = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
"""What a child inherits of the environment: enough to start Python, no secret (database, broker or API keys)."""


def limits_from(settings: Settings) -> PdfLimits:
    return PdfLimits(memory_mb=settings.pdf_memory_mb, cpu_s=settings.pdf_cpu_s, wall_s=settings.pdf_wall_s,
                     max_pages=settings.pdf_max_pages, max_page_chars=settings.pdf_max_page_chars,
                     max_chars=settings.pdf_max_chars, max_page_pt=settings.pdf_max_page_pt,
                     max_render_px=settings.pdf_render_max_px)


class _Lost(Exception):
    """The child cannot answer this request (dead, late, or it sent something no child would)."""


class _Child:
    def __init__(self, limits: PdfLimits):
        self.limits = limits
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "citestream.sandbox.child", str(limits.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
            env={k: os.environ[k] for k in _CHILD_ENV if k in os.environ})
        assert self.proc.stdin is not None and self.proc.stdout is not None  # PIPE gives both
        self.inbox, self.outbox = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.inbox, False)

    def request(self, header: dict, data: bytes) -> tuple[dict, bytes]:
        deadline = time.monotonic() + self.limits.wall_s
        self._send(frames.encode(header, data), deadline)
        header_len, body_len = frames.PREFIX.unpack(self._receive(frames.PREFIX.size, deadline))
        if header_len + body_len > self.limits.reply_bytes():
            raise _Lost(f"its reply would be {header_len + body_len} bytes, more than a PDF within the caps gives")
        try:
            reply = json.loads(self._receive(header_len, deadline))
        except ValueError:
            raise _Lost("its reply was not JSON") from None
        if not isinstance(reply, dict):
            raise _Lost("its reply was not a JSON object")
        return reply, self._receive(body_len, deadline)

    def _send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            if not select.select([], [self.inbox], [], self._left(deadline))[1]:
                raise _Lost(self._late())
            try:
                view = view[os.write(self.inbox, view[: 1 << 20]):]
            except BlockingIOError:  # the pipe filled up between select and write: wait again
                continue
            except BrokenPipeError:
                raise _Lost(self._died()) from None

    def _receive(self, size: int, deadline: float) -> bytes:
        out = bytearray()
        while len(out) < size:
            if not select.select([self.outbox], [], [], self._left(deadline))[0]:
                raise _Lost(self._late())
            chunk = os.read(self.outbox, min(size - len(out), 1 << 20))
            if not chunk:
                raise _Lost(self._died())
            out += chunk
        return bytes(out)

    def _left(self, deadline: float) -> float:
        return max(0.0, deadline - time.monotonic())

    def _late(self) -> str:
        return f"took longer than {self.limits.wall_s:g} s (CITESTREAM_PDF_WALL_S)"

    def _died(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the PDF reader stopped answering"
        if code == -signal.SIGXCPU:
            return f"needs more than {self.limits.cpu_s} s of CPU (CITESTREAM_PDF_CPU_S)"
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
        return (f"the PDF reader stopped ({how}): the PDF needs more than the {self.limits.memory_mb} MB it may use "
                "(CITESTREAM_PDF_MEMORY_MB), or crashes pdfium")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Kill (a child is never mid-write of anything that matters) and reap."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class PdfPool:
    """``size`` children at most, started when first needed; ``call`` waits for a free one."""

    def __init__(self, limits: PdfLimits, size: int):
        self.limits = limits
        self._slots: queue.LifoQueue[_Child | None] = queue.LifoQueue()  # the warm child first
        for _ in range(max(1, size)):
            self._slots.put(None)

    def call(self, op: str, data: bytes, **args: Any) -> tuple[Any, bytes]:
        """The child's answer to ``op`` on ``data`` (its value and binary body); ``PdfRejected`` with the reason
        when the PDF is refused, over a limit, or the child died or ran late on it."""
        child = self._slots.get()
        try:
            if child is None or not child.alive():
                child = _Child(self.limits)
            try:
                reply, body = child.request({"op": op, "args": args, "limits": self.limits.as_dict()}, data)
            except _Lost as exc:
                raise PdfRejected(str(exc)) from None
            if "ok" not in reply:
                raise PdfRejected(str(reply.get("rejected", "refused")))
            return reply["ok"], body
        except BaseException:
            if child is not None:
                child.stop()  # what the PDF left in it meets no other PDF
            child = None
            raise
        finally:
            self._slots.put(child)

    def close(self) -> None:
        """Stop every idle child (at exit; a child also exits by itself when its parent's pipe closes)."""
        while True:
            try:
                child = self._slots.get_nowait()
            except queue.Empty:
                return
            if child is not None:
                child.stop()


@lru_cache(maxsize=4)
def _pool(limits: PdfLimits, size: int) -> PdfPool:
    pool = PdfPool(limits, size)
    atexit.register(pool.close)
    return pool


def pdf_pool(settings: Settings | None = None) -> PdfPool:
    """This process's pool for the configured limits (``CITESTREAM_PDF_*``)."""
    settings = settings or get_settings()
    return _pool(limits_from(settings), settings.pdf_workers)
