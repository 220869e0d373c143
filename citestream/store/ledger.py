"""The append-only audit ledger: one hash-chained row per prompt sent to a model.

Each row's hash covers its fields and the previous row's hash, so a changed or
removed row breaks every link after it. Concurrent workers extend one chain and
never fork it: a row's ``prev_hash`` is unique (migration 0009), and an append
inserts only while the row it links to is the head. The database itself rejects
UPDATE, DELETE and TRUNCATE (migration 0001), and the worker's role may only
SELECT and INSERT (0004). Against a superuser, who can
rewrite rows and recompute the chain, ``verify`` also checks signed checkpoints
kept outside the database (``store.anchors``).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, UTC

from psycopg.types.json import Jsonb
from sqlalchemy import Connection, Engine, func, select
from sqlalchemy.exc import IntegrityError

from ..core.hashing import sha256_hex
from .db import driver_rows, single_statements
from .tables import audit_ledger

GENESIS_HASH = "0" * 64


@dataclass(frozen=True)
class LedgerEntry:
    request_id: str
    stage: str
    prompt_sha256: str
    model: str
    policy_version: str
    index_version: str
    created_at: datetime
    payload: dict


def row_hash(prev_hash: str, entry: LedgerEntry) -> str:
    material = json.dumps(
        {
            "prev_hash": prev_hash,
            "request_id": entry.request_id,
            "stage": entry.stage,
            "prompt_sha256": entry.prompt_sha256,
            "model": entry.model,
            "policy_version": entry.policy_version,
            "index_version": entry.index_version,
            # in UTC whatever the session's TimeZone: the same instant always hashes the same
            "created_at": entry.created_at.astimezone(UTC).isoformat(),
            "payload": entry.payload,
        },
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return sha256_hex(material)


@dataclass(frozen=True)
class ChainReport:
    rows: int
    ok: bool
    first_broken_id: int | None = None
    reason: str | None = None
    checkpoints: int = 0  # signed checkpoints the chain was checked against
    anchored_row: int | None = None  # the newest checkpoint's row id


# An append is one statement, run by psycopg itself (``driver_rows``): every answered question appends. It inserts
# only when the row it links to is still the head, and returns the head it saw, so a writer whose head was stale
# links again without another read. Two writers that saw the same head race on the unique prev_hash (0009): one
# insert fails and links again.
_COLUMNS = ("request_id", "stage", "prompt_sha256", "model", "policy_version", "index_version", "created_at",
            "payload", "prev_hash", "row_hash")
_APPEND = (
    "WITH head AS (SELECT coalesce((SELECT row_hash FROM audit_ledger ORDER BY id DESC LIMIT 1), %(genesis)s) AS h), "
    f"added AS (INSERT INTO audit_ledger ({', '.join(_COLUMNS)}) "
    f"SELECT {', '.join(f'%({c})s' for c in _COLUMNS)} FROM head WHERE h = %(prev_hash)s "
    "ON CONFLICT ON CONSTRAINT audit_ledger_once_per_prompt DO NOTHING RETURNING id) "
    "SELECT (SELECT h FROM head) AS head, (SELECT id FROM added) AS id"
)
_FORK = "audit_ledger_one_successor"
_MAX_LINKS = 100
"""Links tried before an append gives up: each failed one means another writer's row went in meanwhile."""


class Ledger:
    def __init__(self, engine: Engine):
        self.engine = engine
        self._appends = single_statements(engine)
        self._lock = threading.Lock()  # this process's appends link one after another, not against each other
        self._head: str | None = None
        """The newest row's hash as this process last saw it; when another writer has appended since, the append
        learns the real head from its own statement."""

    def append(self, entry: LedgerEntry) -> bool:
        """Append once per (request_id, stage, prompt_sha256); returns False if that row already exists."""
        with self._lock, self._appends.connect() as conn:
            try:
                return self._link(conn, entry)
            except BaseException:
                self._head = None  # a statement's outcome is unknown: learn the head again
                raise

    def _link(self, conn: Connection, entry: LedgerEntry) -> bool:
        """Insert ``entry`` after the head, learning the head from each statement until the link holds."""
        prev = self._head or GENESIS_HASH
        for _ in range(_MAX_LINKS):
            linked = row_hash(prev, entry)
            try:
                row = driver_rows(conn, _APPEND, {
                    "genesis": GENESIS_HASH, "request_id": entry.request_id, "stage": entry.stage,
                    "prompt_sha256": entry.prompt_sha256, "model": entry.model,
                    "policy_version": entry.policy_version, "index_version": entry.index_version,
                    "created_at": entry.created_at, "payload": Jsonb(entry.payload), "prev_hash": prev,
                    "row_hash": linked})[0]
            except IntegrityError as exc:
                if getattr(getattr(exc.orig, "diag", None), "constraint_name", None) != _FORK:
                    raise
                continue  # another writer linked to the same head first; the next statement names the head
            if row.id is not None:
                self._head = linked
                return True
            if row.head == prev:
                self._head = prev
                return False  # linked to the real head and not inserted: the row exists
            prev = row.head
        raise RuntimeError(f"ledger append for {entry.request_id}: the head moved {_MAX_LINKS} times in a row")

    def entries_for(self, request_id: str) -> list[dict]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(audit_ledger).where(audit_ledger.c.request_id == request_id).order_by(audit_ledger.c.id)
            ).mappings().all()
        return [dict(r) for r in rows]

    def head(self) -> tuple[int, str, int] | None:
        """The newest row's id and hash and the number of rows (None for an empty ledger)."""
        with self.engine.connect() as conn:
            last = conn.execute(select(audit_ledger.c.id, audit_ledger.c.row_hash)
                                .order_by(audit_ledger.c.id.desc()).limit(1)).first()
            if last is None:
                return None
            count = conn.execute(select(func.count()).select_from(audit_ledger)).scalar_one()
        return last.id, last.row_hash, count

    def unanchored(self, after_id: int | None, older_than_s: float) -> tuple[int, int | None]:
        """Rows after ``after_id`` (all when None) written more than ``older_than_s`` seconds ago: how many, and the
        first one's id. A worker anchors within its interval, so such rows mean checkpoints went missing."""
        since = audit_ledger.c.created_at < func.now() - timedelta(seconds=older_than_s)
        query = select(func.count(), func.min(audit_ledger.c.id)).where(since)
        if after_id is not None:
            query = query.where(audit_ledger.c.id > after_id)
        with self.engine.connect() as conn:
            count, first = conn.execute(query).one()
        return count, first

    def verify(self, checkpoints=()) -> ChainReport:
        """Recompute the chain from the first row, then hold it against signed ``checkpoints``.

        Reports the first row whose link or hash is wrong; else a checkpoint whose
        row now has another hash (rewritten, chain recomputed) or that the ledger
        no longer reaches (tail truncated) or whose row count differs (rows removed
        or inserted before it).
        """
        prev, count, last_id = GENESIS_HASH, 0, None
        wanted = {c.row_id for c in checkpoints}
        seen: dict[int, tuple[str, int]] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(select(audit_ledger).order_by(audit_ledger.c.id)).mappings():
                count += 1
                if row["prev_hash"] != prev:
                    return ChainReport(count, False, row["id"], "prev_hash does not match the previous row")
                entry = LedgerEntry(
                    row["request_id"], row["stage"], row["prompt_sha256"], row["model"], row["policy_version"],
                    row["index_version"], row["created_at"], row["payload"],
                )
                if row_hash(prev, entry) != row["row_hash"]:
                    return ChainReport(count, False, row["id"], "row content does not match its hash")
                prev, last_id = row["row_hash"], row["id"]
                if row["id"] in wanted:
                    seen[row["id"]] = (row["row_hash"], count)
        anchored = max((c.row_id for c in checkpoints), default=None)
        for checkpoint in sorted(checkpoints, key=lambda c: c.row_id):
            found = seen.get(checkpoint.row_id)
            if found is None:
                if last_id is None or checkpoint.row_id > last_id or count < checkpoint.count:
                    return ChainReport(count, False, checkpoint.row_id, (
                        f"TRUNCATED: a checkpoint signed {checkpoint.created_at} has {checkpoint.count} rows up to "
                        f"row {checkpoint.row_id}; the ledger now ends at row {last_id} with {count} rows"),
                        len(checkpoints), anchored)
                return ChainReport(count, False, checkpoint.row_id, (
                    f"REWRITTEN: row {checkpoint.row_id} of a checkpoint signed {checkpoint.created_at} is gone"),
                    len(checkpoints), anchored)
            if found[0] != checkpoint.head_hash:
                return ChainReport(count, False, checkpoint.row_id, (
                    f"REWRITTEN: row {checkpoint.row_id} no longer has the hash a checkpoint signed "
                    f"{checkpoint.created_at} recorded (rows were changed and the chain recomputed)"),
                    len(checkpoints), anchored)
            if found[1] != checkpoint.count:
                return ChainReport(count, False, checkpoint.row_id, (
                    f"REWRITTEN: {found[1]} rows up to row {checkpoint.row_id}, a checkpoint signed "
                    f"{checkpoint.created_at} counted {checkpoint.count}"), len(checkpoints), anchored)
        return ChainReport(count, True, checkpoints=len(checkpoints),
                           anchored_row=anchored)
