"""A `citestream worker` in a process of its own, for the tests and benchmarks that need the real thing.

Readiness is read from the worker's log (faust's "Worker ready" line): the one
signal every worker gives without a port or API of its own. The log is kept,
so a failure can show what the worker said.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ..config import PROJECT_ROOT

READY = b"Worker ready"


class WorkerProcess:
    """Starts on construction; ``wait_ready``/``wait_for`` poll its log; ``stop`` terminates, then kills.

    ``env`` is laid over this process's environment (a worker on other servers,
    topics or backend); ``start_s`` is how long ``wait_ready`` waits by default.
    """

    def __init__(self, log_path: Path, env: dict[str, str] | None = None, start_s: float = 120):
        self.log_path = log_path
        self.start_s = start_s
        self._log = open(log_path, "wb")  # noqa: SIM115 - the process's log, closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "citestream", "worker", "--loglevel", "info"],
            stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=PROJECT_ROOT,
        )

    def wait_ready(self, timeout_s: float | None = None) -> None:
        """Until the worker is ready; one that does not get there is stopped, so no caller leaks it."""
        try:
            self.wait_for(READY, self.start_s if timeout_s is None else timeout_s)
        except RuntimeError:
            self.stop()
            raise

    def wait_for(self, needle: bytes, timeout_s: float) -> None:
        """Until ``needle`` is in the log; RuntimeError (with the log's tail) once the worker exits or time is up."""
        deadline = time.monotonic() + timeout_s
        while needle not in self.log_path.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                why = (f"the worker exited ({self.proc.returncode})" if self.proc.poll() is not None
                       else f"not there after {timeout_s:.0f} s")
                raise RuntimeError(f"{needle.decode()!r} not in the worker's log, {why}; see {self.log_path}:\n"
                                   f"{self.log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)

    def stop(self) -> None:
        terminate(self.proc, grace_s=30)
        self._log.close()


def terminate(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after ``grace_s``: a clean stop when the process allows it, a stop either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
