"""Each request_id's progress through the flow, so an operator (and the reconciler) can see where it is."""

from __future__ import annotations

from sqlalchemy import Engine, func, select
from sqlalchemy.dialects.postgresql import insert

from .tables import requests

TERMINAL = ("answered", "refused", "failed")


class RequestTracker:
    def __init__(self, engine: Engine):
        self.engine = engine

    def mark(self, request_id: str, state: str, *, question: str | None = None, scope: str | None = None,
             detail: str | None = None) -> None:
        """Record that ``request_id`` reached ``state``; a terminal state is never overwritten by a later stage."""
        outcome = state if state in TERMINAL else None
        stmt = insert(requests).values(
            request_id=request_id, state=state, question=question, scope=scope, outcome=outcome, detail=detail,
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[requests.c.request_id],
            set_={
                "state": stmt.excluded.state,
                "outcome": func.coalesce(stmt.excluded.outcome, requests.c.outcome),
                "detail": func.coalesce(stmt.excluded.detail, requests.c.detail),
                "question": func.coalesce(requests.c.question, stmt.excluded.question),
                "scope": func.coalesce(requests.c.scope, stmt.excluded.scope),
                "updated_at": func.now(),
            },
            where=requests.c.outcome.is_(None),
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def get(self, request_id: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(requests).where(requests.c.request_id == request_id)).mappings().first()
        return dict(row) if row else None
