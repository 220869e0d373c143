"""Debian's Chromium driven by Playwright, and a `citestream web` process: what the browser tests and the
screenshot script share.

Playwright never downloads a browser here (`playwright install` needs the internet): it drives the
`chromium` package that `make install` puts at /usr/bin/chromium, with a fresh profile per launch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

from citestream.infra.worker import terminate

CHROMIUM = os.environ.get("CITESTREAM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def chromium_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found: `make install` installs Debian's chromium package (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed: `make install` installs the dev extra"
    return None


@contextmanager
def chromium(viewport: dict | None = None):
    """A browser context on a fresh profile folder, removed afterwards."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="citestream-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport=viewport or {"width": 1280, "height": 900}, device_scale_factor=1)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class WebProcess:
    """`citestream web` in a process of its own; ready once /healthz says its consumer has partitions."""

    def __init__(self, log_path: Path, port: int, env: dict[str, str] | None = None):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - the process's log, closed when it stops
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "citestream", "web", "--port", str(port), "--loglevel", "info"],
            stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})

    def wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).json().get("assigned"):
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"citestream web not ready; log:\n{self.log_path.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        terminate(self.proc, grace_s=15)
        self._log.close()
