"""Each request_id's progress through the flow, so an operator (and the reconciler) can see where it is.

``history`` keeps the first time each state was reached (received, retrieved,
filtered, assembled, generated, then answered / refused / failed); a terminal
outcome is never overwritten, so a re-processed question cannot change its record.
"""

from __future__ import annotations

from sqlalchemy import Engine, Text, bindparam, func, select
from sqlalchemy.dialects.postgresql import JSONB, insert

from .tables import requests

TERMINAL = ("answered", "refused", "failed")


def _mark_statement():
    """The upsert of ``mark``, built once: every stage of every question marks its request, and building the
    statement again each time was ~8 % of a worker's Python time through Kafka (py-spy, 2026-11-30)."""
    stamp = func.jsonb_build_object(bindparam("state", type_=Text), func.now()).cast(JSONB)
    stmt = insert(requests).values(
        request_id=bindparam("request_id"), state=bindparam("state"), question=bindparam("question"),
        scope=bindparam("scope"), outcome=bindparam("outcome"), detail=bindparam("detail"), history=stamp,
    )
    return stmt.on_conflict_do_update(
        index_elements=[requests.c.request_id],
        set_={
            "state": stmt.excluded.state,
            "outcome": func.coalesce(stmt.excluded.outcome, requests.c.outcome),
            "detail": func.coalesce(stmt.excluded.detail, requests.c.detail),
            "question": func.coalesce(requests.c.question, stmt.excluded.question),
            "scope": func.coalesce(requests.c.scope, stmt.excluded.scope),
            # first arrival wins: the stored history stays on the right of ||
            "history": stmt.excluded.history.op("||")(requests.c.history),
            "updated_at": func.now(),
        },
        where=requests.c.outcome.is_(None),
    )


def _admit_statement():
    """The upsert of ``admit``, built once like ``mark``'s: one per question."""
    stamp = func.jsonb_build_object("received", func.now()).cast(JSONB)
    new = insert(requests).values(request_id=bindparam("request_id"), state="received", question=bindparam("question"),
                                  scope=bindparam("scope"), fingerprint=bindparam("fingerprint"), history=stamp)
    return new.on_conflict_do_update(
        index_elements=[requests.c.request_id],
        set_={"fingerprint": func.coalesce(requests.c.fingerprint, new.excluded.fingerprint),
              "question": func.coalesce(requests.c.question, new.excluded.question),
              "scope": func.coalesce(requests.c.scope, new.excluded.scope)},
    ).returning(requests.c.fingerprint, requests.c.outcome)


_MARK, _ADMIT = _mark_statement(), _admit_statement()


class RequestTracker:
    def __init__(self, engine: Engine):
        self.engine = engine

    def mark(self, request_id: str, state: str, *, question: str | None = None, scope: str | None = None,
             detail: str | None = None) -> None:
        """Record that ``request_id`` reached ``state``; a terminal state is never overwritten by a later stage."""
        outcome = state if state in TERMINAL else None
        with self.engine.begin() as conn:
            conn.execute(_MARK, {"request_id": request_id, "state": state, "question": question, "scope": scope,
                                 "outcome": outcome, "detail": detail})

    def admit(self, request_id: str, fingerprint: str, question: str, scope: str) -> tuple[str | None, str | None]:
        """Record a question's arrival; returns the fingerprint stored for its id and its outcome.

        The first fingerprint seen for an id is kept (a row the reconciler made
        before the question arrived adopts this one), so a caller whose
        fingerprint differs knows the id belongs to another question.
        """
        with self.engine.begin() as conn:
            row = conn.execute(_ADMIT, {"request_id": request_id, "question": question, "scope": scope,
                                        "fingerprint": fingerprint}).one()
        return row.fingerprint, row.outcome

    def get(self, request_id: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(requests).where(requests.c.request_id == request_id)).mappings().first()
        return dict(row) if row else None

    def outcomes(self, request_ids: list[str]) -> dict[str, dict]:
        """State, outcome, last progress time and re-drive count of each known request among ``request_ids``."""
        if not request_ids:
            return {}
        cols = [requests.c.request_id, requests.c.state, requests.c.outcome, requests.c.updated_at,
                requests.c.redrives]
        with self.engine.connect() as conn:
            rows = conn.execute(select(*cols).where(requests.c.request_id.in_(request_ids))).mappings().all()
        return {r["request_id"]: dict(r) for r in rows}

    def note_redrive(self, request_id: str) -> int:
        """Count one re-drive (creating the row when the question never reached a stage); returns the count."""
        new = insert(requests).values(request_id=request_id, state="redriven", redrives=1,
                                      history=func.jsonb_build_object("redriven", func.now()).cast(JSONB))
        stmt = new.on_conflict_do_update(
            index_elements=[requests.c.request_id],
            set_={"redrives": requests.c.redrives + 1, "updated_at": func.now(),
                  "history": new.excluded.history.op("||")(requests.c.history)},
        ).returning(requests.c.redrives)
        with self.engine.begin() as conn:
            return conn.execute(stmt).scalar_one()


__all__ = ["RequestTracker", "TERMINAL"]
