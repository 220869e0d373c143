"""What each stage emitted for a request, as digests: insert-only, so a forged internal record has no match."""

from __future__ import annotations

from sqlalchemy import Engine, select
from sqlalchemy.dialects.postgresql import insert

from .tables import provenance


class ProvenanceStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    def record(self, request_id: str, stage: str, sha256: str) -> None:
        """Note that ``stage`` emitted a record with digest ``sha256`` for ``request_id`` (idempotent)."""
        stmt = insert(provenance).values(request_id=request_id, stage=stage, sha256=sha256).on_conflict_do_nothing()
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def knows(self, request_id: str, stage: str, sha256: str) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(select(provenance.c.sha256).where(
                provenance.c.request_id == request_id, provenance.c.stage == stage,
                provenance.c.sha256 == sha256)).first() is not None


__all__ = ["ProvenanceStore"]
