"""Which records the page may show: those whose MAC holds under the worker's record key (``citestream.sealing``).

The page runs beside the worker and reads the same key file; it never makes one (a key only the page knew would
verify nothing). While the key cannot be read, every record of a sealed topic is held back and the page says why;
the file is read again at most every ``RETRY_S`` seconds, so a worker that starts after the page is picked up.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..core.errors import RecordRejected
from ..sealing import PROVENANCE_MISMATCH, KeyUnavailable, RecordSealer

RETRY_S = 5.0


class PageTrust:
    def __init__(self, key_path: Path):
        self.key_path = key_path
        self.unavailable: str | None = "the record key has not been read yet"
        self._sealer: RecordSealer | None = None
        self._tried_at = float("-inf")
        self._load()

    def _load(self) -> RecordSealer | None:
        if self._sealer is None and time.monotonic() - self._tried_at >= RETRY_S:
            self._tried_at = time.monotonic()
            try:
                self._sealer, self.unavailable = RecordSealer.from_file(self.key_path), None
            except KeyUnavailable as exc:
                self.unavailable = f"{exc}: records are not shown until the page can verify them"
        return self._sealer

    def check(self, data: object) -> None:
        """``RecordRejected`` unless a worker wrote ``data`` as it is (also when the key cannot be read)."""
        sealer = self._load()
        if sealer is None:
            raise RecordRejected(PROVENANCE_MISMATCH, self.unavailable or "no record key")
        sealer.check(data)

    def problem(self, data: object) -> str | None:
        try:
            self.check(data)
        except RecordRejected as exc:
            return exc.reason
        return None
