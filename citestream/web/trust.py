"""Which records the page may show: those whose seal holds under the worker's public record key
(``citestream.sealing``).

The page runs beside the worker and reads only the public key (``records.pub``, which a worker writes): it can
check a seal and never make one, so neither the page nor the PDF child it starts can pass off a record. While the
key cannot be read, every record of a sealed topic is held back and the page says why (never where the key is:
``/healthz`` is public); the file is read again at most every ``RETRY_S`` seconds, so a worker that starts after
the page is picked up.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..core.errors import RecordRejected
from ..sealing import PROVENANCE_MISMATCH, KeyUnavailable, RecordVerifier

RETRY_S = 5.0


class PageTrust:
    def __init__(self, public_key_path: Path):
        self.key_path = public_key_path
        self.unavailable: str | None = "the record key has not been read yet"
        self._verifier: RecordVerifier | None = None
        self._tried_at = float("-inf")
        self._load()

    def _load(self) -> RecordVerifier | None:
        if self._verifier is None and time.monotonic() - self._tried_at >= RETRY_S:
            self._tried_at = time.monotonic()
            try:
                self._verifier, self.unavailable = RecordVerifier.from_file(self.key_path), None
            except KeyUnavailable as exc:
                self.unavailable = f"{exc}: records are not shown until the page can verify them"
        return self._verifier

    def check(self, data: object) -> None:
        """``RecordRejected`` unless a worker wrote ``data`` as it is (also when the key cannot be read)."""
        verifier = self._load()
        if verifier is None:
            raise RecordRejected(PROVENANCE_MISMATCH, self.unavailable or "no record key")
        verifier.check(data)

    def problem(self, data: object) -> str | None:
        try:
            self.check(data)
        except RecordRejected as exc:
            return exc.reason
        return None
