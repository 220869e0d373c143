"""The engine's connections: broken ones are found where they are used or when they were idle, never handed on."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from citestream.store import db
from citestream.store.db import driver_rows, make_engine


def _backend_pid(conn) -> int:
    return driver_rows(conn, "SELECT pg_backend_pid() AS pid", {})[0].pid


def _terminate(dsn: str, pid: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


@pytest.mark.parametrize("opening", ["connect", "begin"])
def test_a_connection_that_breaks_in_use_raises_operational_error_and_is_not_pooled_again(database, opening):
    """A stage waits out ``OperationalError`` (streams.faust_app); psycopg's own error from a direct statement would
    have failed the question instead."""
    engine = make_engine(database)
    try:
        with pytest.raises(OperationalError), getattr(engine, opening)() as conn:
            _terminate(database, _backend_pid(conn))
            driver_rows(conn, "SELECT 1 AS one", {})
        with engine.begin() as conn:  # the next checkout is a working connection
            assert driver_rows(conn, "SELECT 1 AS one", {})[0].one == 1
    finally:
        engine.dispose()


def test_an_idle_pooled_connection_is_pinged_and_replaced_when_its_server_side_is_gone(database, monkeypatch):
    engine = make_engine(database)
    try:
        with engine.connect() as conn:
            pid = _backend_pid(conn)
        _terminate(database, pid)  # as a restart of Postgres does to every pooled connection
        monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 0.0)
        with engine.connect() as conn:
            assert _backend_pid(conn) != pid
    finally:
        engine.dispose()


def test_a_connection_back_from_use_within_the_idle_window_is_handed_out_without_a_ping(database, monkeypatch):
    pings: list[object] = []
    alive = db._alive
    monkeypatch.setattr(db, "_alive", lambda conn: pings.append(conn) or alive(conn))
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 60.0)
    engine = make_engine(database)
    try:
        for _ in range(3):
            with engine.begin() as conn:
                driver_rows(conn, "SELECT 1 AS one", {})
        assert pings == []
        monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 0.0)
        with engine.begin() as conn:
            driver_rows(conn, "SELECT 1 AS one", {})
        assert len(pings) == 1
    finally:
        engine.dispose()
