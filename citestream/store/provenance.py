"""What each stage emitted for a request, as digests: insert-only, so a forged internal record has no match."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, text


class ProvenanceStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    def record(self, request_id: str, stage: str, sha256: str) -> None:
        """Note that ``stage`` emitted a record with digest ``sha256`` for ``request_id`` (idempotent)."""
        with self.engine.begin() as conn:
            conn.execute(_RECORD, {"r": request_id, "s": stage, "d": sha256})

    def lookup(self, request_id: str, stage: str, sha256: str, prompt_sha256: str | None = None) -> Lookup:
        """Whether ``stage`` recorded ``sha256`` for ``request_id``, and the payload of the ledger's ``generate``
        row for ``prompt_sha256``: one round trip for the validate stage's two checks."""
        with self.engine.connect() as conn:
            known, payload = conn.execute(_LOOKUP, {"r": request_id, "s": stage, "d": sha256,
                                                    "p": prompt_sha256}).one()
        return Lookup(bool(known), payload)


@dataclass(frozen=True)
class Lookup:
    known: bool
    generate_payload: dict | None  # None: the ledger has no generate row for the prompt (its payload is NOT NULL)


# Written out once: a statement built per call costs the SQL compiler's cache key every time (~0.1 ms of CPU).
_RECORD = text("INSERT INTO provenance (request_id, stage, sha256) VALUES (:r, :s, :d) ON CONFLICT DO NOTHING")
_LOOKUP = text(
    "SELECT EXISTS (SELECT 1 FROM provenance WHERE request_id = :r AND stage = :s AND sha256 = :d), l.payload "
    "FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT payload FROM audit_ledger WHERE request_id = :r "
    "AND stage = 'generate' AND prompt_sha256 = :p ORDER BY id LIMIT 1) AS l ON true"
)


__all__ = ["Lookup", "ProvenanceStore"]
