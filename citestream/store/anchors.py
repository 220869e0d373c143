"""Signed checkpoints of the audit ledger, kept where the database cannot reach them.

The hash chain alone proves nothing to someone who can write to the database as
a superuser: they can disable the triggers, rewrite rows and recompute every
hash after them, or delete the newest rows (the chain of what is left stays
intact). So the worker periodically writes a checkpoint — the head row's id and
hash and the number of rows — signed with HMAC-SHA256 under a key that lives in
a file outside Postgres (``<state>/keys/ledger-anchor.key``, 0600), and appends
it to a file outside Postgres (``<state>/ledger-anchors.jsonl``, 0600).
``citestream ledger verify`` checks the chain against every checkpoint with a
valid signature: a rewritten row no longer has the signed hash, a truncated
tail no longer reaches the signed row or count. What a checkpoint cannot see:
rows appended and then removed between two checkpoints, and an attacker who
also holds the key file.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from datetime import datetime, UTC
from pathlib import Path
from urllib.parse import urlsplit

from ..sealing.keys import load_key

log = logging.getLogger("citestream.ledger.anchors")


@dataclass(frozen=True)
class Checkpoint:
    ledger: str  # host:port/database, so one file can anchor several databases
    row_id: int
    head_hash: str
    count: int
    created_at: str
    mac: str = ""

    def material(self) -> bytes:
        fields = {k: v for k, v in asdict(self).items() if k != "mac"}
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def ledger_name(dsn: str) -> str:
    """Which ledger a DSN reaches: ``host:port/database`` (the user and password do not matter)."""
    parts = urlsplit(dsn)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}/{parts.path.lstrip('/') or 'postgres'}"


def sign(key: bytes, checkpoint: Checkpoint) -> Checkpoint:
    mac = hmac.new(key, checkpoint.material(), hashlib.sha256).hexdigest()
    return Checkpoint(**{**asdict(checkpoint), "mac": mac})


def genuine(key: bytes, checkpoint: Checkpoint) -> bool:
    return hmac.compare_digest(sign(key, checkpoint).mac, checkpoint.mac)


class AnchorFile:
    """An append-only JSON-lines file of signed checkpoints (0600; appends under an exclusive lock)."""

    def __init__(self, path: Path, key: bytes):
        self.path, self.key = path, key

    def append(self, checkpoint: Checkpoint) -> Checkpoint:
        signed = sign(self.key, checkpoint)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, (json.dumps(asdict(signed), sort_keys=True) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return signed

    def read(self, ledger: str) -> tuple[list[Checkpoint], int]:
        """This ledger's checkpoints whose signature holds, oldest first, and how many lines failed the check."""
        good, bad = [], 0
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return [], 0
        for line in lines:
            try:
                checkpoint = Checkpoint(**json.loads(line))
            except (ValueError, TypeError):
                bad += 1
                continue
            if checkpoint.ledger != ledger:
                continue
            if genuine(self.key, checkpoint):
                good.append(checkpoint)
            else:
                bad += 1
        return good, bad


def anchor_file(settings, create_key: bool = False) -> AnchorFile | None:
    key = load_key(settings.ledger_key_path, create=create_key)
    return AnchorFile(settings.ledger_anchor_path, key) if key else None


def write_checkpoint(ledger, anchors: AnchorFile | None, name: str) -> Checkpoint | None:
    """Sign and append the ledger's current head, unless the last checkpoint already says the same."""
    if anchors is None:  # anchor_file(create_key=True) read an empty key file (e.g. one another process is writing)
        raise RuntimeError("no ledger signing key: the key file is empty")
    head = ledger.head()
    if head is None:
        return None
    row_id, head_hash, count = head
    existing, _ = anchors.read(name)
    if existing and (existing[-1].row_id, existing[-1].head_hash, existing[-1].count) == head:
        return existing[-1]
    return anchors.append(Checkpoint(name, row_id, head_hash, count,
                                     datetime.now(UTC).isoformat(timespec="seconds")))


def keep_anchored(settings, stop_after: float | None = None) -> None:
    """The worker's daemon thread: a checkpoint every ``ledger_anchor_interval_s`` when the ledger grew."""
    from . import Ledger, engine_for

    if settings.ledger_anchor_interval_s <= 0:
        return
    anchors = anchor_file(settings, create_key=True)
    ledger, name = Ledger(engine_for(settings.app_dsn)), ledger_name(settings.database_url)
    started = time.monotonic()
    while stop_after is None or time.monotonic() - started < stop_after:
        time.sleep(settings.ledger_anchor_interval_s)
        try:
            write_checkpoint(ledger, anchors, name)
        except Exception as exc:  # database away, disk full: try again next time, never stop the worker
            log.warning("ledger checkpoint not written: %s", type(exc).__name__)
