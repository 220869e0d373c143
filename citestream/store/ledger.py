"""The append-only audit ledger: one hash-chained row per prompt sent to a model.

Each row's hash covers its fields and the previous row's hash, so a changed or
removed row breaks every link after it. Appends take a transaction-scoped
advisory lock so concurrent workers extend one chain, never fork it. The
database itself rejects UPDATE, DELETE and TRUNCATE (migration 0001), and the
worker's role may only SELECT and INSERT (0004). Against a superuser, who can
rewrite rows and recompute the chain, ``verify`` also checks signed checkpoints
kept outside the database (``store.anchors``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, UTC

from psycopg.types.json import Jsonb
from sqlalchemy import Engine, func, select

from ..core.hashing import sha256_hex
from .db import driver_rows
from .tables import audit_ledger

GENESIS_HASH = "0" * 64
_LOCK_KEY = 0x0C17E57EA  # any constant shared by all writers


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


# An append's statements, run by psycopg itself (``driver_rows``): every answered question appends.
_LOCK = "SELECT pg_advisory_xact_lock(%(k)s)"
_HEAD = "SELECT row_hash FROM audit_ledger ORDER BY id DESC LIMIT 1"
_COLUMNS = ("request_id", "stage", "prompt_sha256", "model", "policy_version", "index_version", "created_at",
            "payload", "prev_hash", "row_hash")
_INSERT = (f"INSERT INTO audit_ledger ({', '.join(_COLUMNS)}) VALUES ({', '.join(f'%({c})s' for c in _COLUMNS)}) "
           "ON CONFLICT ON CONSTRAINT audit_ledger_once_per_prompt DO NOTHING RETURNING id")


class Ledger:
    def __init__(self, engine: Engine):
        self.engine = engine

    def append(self, entry: LedgerEntry) -> bool:
        """Append once per (request_id, stage, prompt_sha256); returns False if that row already exists."""
        with self.engine.begin() as conn:
            driver_rows(conn, _LOCK, {"k": _LOCK_KEY})
            head = driver_rows(conn, _HEAD, {})
            prev = head[0].row_hash if head else GENESIS_HASH
            inserted = driver_rows(conn, _INSERT, {
                "request_id": entry.request_id, "stage": entry.stage, "prompt_sha256": entry.prompt_sha256,
                "model": entry.model, "policy_version": entry.policy_version, "index_version": entry.index_version,
                "created_at": entry.created_at, "payload": Jsonb(entry.payload), "prev_hash": prev,
                "row_hash": row_hash(prev, entry)})
            return bool(inserted)

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
