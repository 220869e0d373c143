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
tail no longer reaches the signed row or count.

The checkpoints are a chain of their own: each carries its number (``seq``) and
the signature of the one before (``prev``), so a line removed, edited or moved
breaks the next one's link, and a worker that finds the file shorter than what
it wrote itself goes on from its own last checkpoint (the gap then shows). A
file emptied or cut at its end is seen by ``ledger verify`` as rows older than
the checkpoint interval that no checkpoint covers. A line that is not a
checkpoint (not JSON, a field of the wrong type, a signature that is not hex)
is counted as broken, never a crash. What a checkpoint cannot see: rows appended
and then removed between two checkpoints, and an attacker who also holds the
key file.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
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
    seq: int = 0     # 1, 2, ... per ledger; 0 on a line written before checkpoints were chained
    prev: str = ""   # the signature of this ledger's checkpoint before it

    def material(self) -> bytes:
        fields = {k: v for k, v in asdict(self).items() if k != "mac"}
        if not self.seq and not self.prev:  # signed before the chain: its signature covers the older fields only
            fields.pop("seq"), fields.pop("prev")
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def parse(cls, line: str) -> Checkpoint | None:
        """The checkpoint on ``line``, or None when the line is not one (its fields of the wrong type included)."""
        try:
            data = json.loads(line)
            checkpoint = cls(**data)
        except (ValueError, TypeError):
            return None
        ints = (checkpoint.row_id, checkpoint.count, checkpoint.seq)
        if (not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints)
                or not all(isinstance(v, str) for v in (checkpoint.ledger, checkpoint.created_at))
                or not _HEX64.fullmatch(str(checkpoint.head_hash)) or not _HEX64.fullmatch(str(checkpoint.mac))
                or not (checkpoint.prev == "" or _HEX64.fullmatch(str(checkpoint.prev)))):
            return None
        return checkpoint


_HEX64 = re.compile(r"[0-9a-f]{64}")


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
    """An append-only JSON-lines file of signed, chained checkpoints (0600; read and appended under one exclusive
    lock, so two workers never write the same ``seq``)."""

    def __init__(self, path: Path, key: bytes):
        self.path, self.key = path, key

    def append_next(self, ledger: str, head: tuple[int, str, int], after: Checkpoint | None = None) -> Checkpoint:
        """The ledger's last checkpoint when it already says ``head``; else a new one chained to it (or to
        ``after``, the last one this process wrote, when the file no longer holds it), appended."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "r", encoding="utf-8", errors="replace") as reader:
                good, _ = self._checked(reader.read().splitlines(), ledger)
            last = good[-1] if good else None
            if last is not None and (last.row_id, last.head_hash, last.count) == head:
                return last
            if after is not None and (last is None or last.seq < after.seq):
                log.error("the checkpoint file %s lost checkpoints up to %d that this worker wrote: chaining on "
                          "from its own, so `ledger verify` shows the gap", self.path, after.seq)
                last = after
            signed = sign(self.key, Checkpoint(ledger, *head, datetime.now(UTC).isoformat(timespec="seconds"),
                                               seq=(last.seq if last else 0) + 1, prev=last.mac if last else ""))
            os.write(fd, (json.dumps(asdict(signed), sort_keys=True) + "\n").encode())
            os.fsync(fd)
            return signed
        finally:
            os.close(fd)

    def read(self, ledger: str) -> tuple[list[Checkpoint], int]:
        """This ledger's checkpoints whose signature holds, oldest first, and how many lines are broken: not a
        checkpoint, a signature that does not hold, or a link to the one before that does not."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return [], 0
        return self._checked(lines, ledger)

    def _checked(self, lines: list[str], ledger: str) -> tuple[list[Checkpoint], int]:
        good: list[Checkpoint] = []
        bad = 0
        for line in lines:
            checkpoint = Checkpoint.parse(line)
            if checkpoint is None:
                bad += 1
                continue
            if checkpoint.ledger != ledger:
                continue
            if not genuine(self.key, checkpoint):
                bad += 1
                continue
            last = good[-1] if good else None
            if checkpoint.seq and (checkpoint.seq != (last.seq if last else 0) + 1
                                   or checkpoint.prev != (last.mac if last else "")):
                bad += 1  # a line before it removed, edited or moved: it still counts, the break is reported
            good.append(checkpoint)
        return good, bad


def anchor_file(settings, create_key: bool = False) -> AnchorFile | None:
    key = load_key(settings.ledger_key_path, create=create_key)
    return AnchorFile(settings.ledger_anchor_path, key) if key else None


def write_checkpoint(ledger, anchors: AnchorFile | None, name: str,
                     after: Checkpoint | None = None) -> Checkpoint | None:
    """Sign and append the ledger's current head, unless the last checkpoint already says the same."""
    if anchors is None:  # anchor_file(create_key=True) read an empty key file (e.g. one another process is writing)
        raise RuntimeError("no ledger signing key: the key file is empty")
    head = ledger.head()
    if head is None:
        return None
    return anchors.append_next(name, head, after)


def covers(checkpoints: list[Checkpoint]) -> int | None:
    """The last row id the checkpoints cover (None: no checkpoint)."""
    return max((c.row_id for c in checkpoints), default=None)


def keep_anchored(settings, stop_after: float | None = None) -> None:
    """The worker's daemon thread: a checkpoint every ``ledger_anchor_interval_s`` when the ledger grew."""
    from . import Ledger, engine_for

    if settings.ledger_anchor_interval_s <= 0:
        return
    ledger, name = Ledger(engine_for(settings.app_dsn)), ledger_name(settings.database_url)
    started, written = time.monotonic(), None
    while stop_after is None or time.monotonic() - started < stop_after:
        time.sleep(settings.ledger_anchor_interval_s)
        try:  # the key read each time: one refused (others may read it) is said in the log until it is fixed
            written = write_checkpoint(ledger, anchor_file(settings, create_key=True), name, written) or written
        except Exception as exc:  # database away, disk full, key refused: try again next time, never stop the worker
            log.error("ledger checkpoint not written: %s: %s", type(exc).__name__, exc)
