"""What each stage emitted for a request, as digests: insert-only, so a forged internal record has no match."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from .db import driver_rows, single_statements


class ProvenanceStore:
    def __init__(self, engine: Engine):
        self.engine = single_statements(engine)  # each method is one statement

    def record(self, request_id: str, stage: str, sha256: str) -> None:
        """Note that ``stage`` emitted a record with digest ``sha256`` for ``request_id`` (idempotent)."""
        with self.engine.connect() as conn:
            driver_rows(conn, _RECORD, {"r": request_id, "s": stage, "d": sha256})

    def lookup(self, request_id: str, stage: str, sha256: str, prompt_sha256: str | None = None) -> Lookup:
        """Whether ``stage`` recorded ``sha256`` for ``request_id``, and the payload of the ledger's ``generate``
        row for ``prompt_sha256``: one round trip for the validate stage's two checks."""
        with self.engine.connect() as conn:
            known, payload = driver_rows(conn, _LOOKUP, {"r": request_id, "s": stage, "d": sha256,
                                                         "p": prompt_sha256})[0]
        return Lookup(bool(known), payload)


@dataclass(frozen=True)
class Lookup:
    known: bool
    generate_payload: dict | None  # None: the ledger has no generate row for the prompt (its payload is NOT NULL)


# Run by psycopg itself (``driver_rows``): statements every question runs.
_RECORD = "INSERT INTO provenance (request_id, stage, sha256) VALUES (%(r)s, %(s)s, %(d)s) ON CONFLICT DO NOTHING"
_LOOKUP = (
    "SELECT EXISTS (SELECT 1 FROM provenance WHERE request_id = %(r)s AND stage = %(s)s AND sha256 = %(d)s), "
    "l.payload FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT payload FROM audit_ledger WHERE request_id = %(r)s "
    "AND stage = 'generate' AND prompt_sha256 = %(p)s ORDER BY id LIMIT 1) AS l ON true"
)
