"""Uploads are kept ``CITESTREAM_UPLOAD_KEEP_DAYS``, not forever: their documents, then their files.

The page's visitors add documents without a login; without an end, their PDFs and chunks would grow until the
disk and the index were full. The worker, which writes documents, removes the uploads' documents ingested longer
ago than that (the index moves on without them), every upload's file older than that (the one a document was read
from, or one no document names any more: an upload replaced by a newer one of its name), and the temporary files
a stopped page left behind.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ..store import ChunkStore
from .paths import discard_upload

log = logging.getLogger("citestream.ingest.expiry")
SWEEP_EVERY_S = 3600.0
STALE_INCOMING_S = 86_400.0


def expire_uploads(store: ChunkStore, uploads_dir: Path, keep_days: float) -> int:
    """Remove what is older than ``keep_days``; returns how many documents went."""
    keep_s = keep_days * 86_400
    gone = store.expire_uploads(keep_s)
    for source in gone:
        discard_upload(Path(source), uploads_dir)
    now = time.time()
    for path in uploads_dir.glob("*/*"):  # an upload's file lives as long as its document
        if _age_s(path, now) > keep_s:
            discard_upload(path, uploads_dir)
    for path in uploads_dir.glob(".incoming-*"):
        if _age_s(path, now) > STALE_INCOMING_S:
            path.unlink(missing_ok=True)
    return len(gone)


def _age_s(path: Path, now: float) -> float:
    try:
        return now - path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def keep_uploads_expiring(settings, stop_after: float | None = None) -> None:
    """The worker's daemon thread: a sweep every ``SWEEP_EVERY_S``, the first at once."""
    from ..store import engine_for

    if settings.upload_keep_days <= 0:
        return
    store = ChunkStore(engine_for(settings.app_dsn))
    started = time.monotonic()
    while stop_after is None or time.monotonic() - started < stop_after:
        try:
            if removed := expire_uploads(store, settings.uploads_dir, settings.upload_keep_days):
                log.info("removed %d uploads older than %g days", removed, settings.upload_keep_days)
        except Exception as exc:  # database away: try again at the next sweep, never stop the worker
            log.warning("uploads not expired: %s", type(exc).__name__)
        time.sleep(SWEEP_EVERY_S)
