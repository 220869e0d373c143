"""One SQLAlchemy engine per process (psycopg 3 driver, pooled), with pgvector registered.

``engine_for()`` without a DSN connects as the least-privileged application role
(``Settings.app_dsn``); owners and tests pass their DSN. Local DSNs without a
password use the embedded server's passfile (``Settings.resolve_dsn``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.pq import ConnStatus, ExecStatus
from psycopg.rows import namedtuple_row
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, DisconnectionError

from ..config import get_settings


def sqlalchemy_url(dsn: str) -> str:
    scheme, rest = get_settings().resolve_dsn(dsn).split("://", 1)
    return f"postgresql+psycopg://{rest}" if scheme in ("postgresql", "postgres") else dsn


PING_AFTER_IDLE_S = 1.0
"""A pooled connection idle longer than this is pinged before it is handed out (one empty query). Why not every
checkout (``pool_pre_ping``): under load a connection comes back within milliseconds, and the ping was a round trip
per checkout, 5 a question. A connection that broke while in use is caught where it is used: ``driver_rows`` and
SQLAlchemy raise ``OperationalError``, the connection is invalidated, and the stage waits the outage out
(``streams.faust_app``)."""


def make_engine(dsn: str) -> Engine:
    # 5 kept, up to 15: the agents of one worker hold at most 13 at once (docs/retrieval.md, the pool)
    engine = create_engine(sqlalchemy_url(dsn), pool_size=5, max_overflow=10)

    @event.listens_for(engine, "connect")
    def _register(dbapi_conn, record):  # noqa: ANN001 - SQLAlchemy event signature
        try:
            register_vector(dbapi_conn)
        except Exception:  # the extension may not exist yet (fresh database before migrate)
            dbapi_conn.rollback()
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_conn, record):  # noqa: ANN001
        record.info["returned_at"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_conn, record, _proxy):  # noqa: ANN001
        if time.monotonic() - record.info.get("returned_at", 0.0) > PING_AFTER_IDLE_S and not _alive(dbapi_conn):
            raise DisconnectionError("pooled connection is gone; the pool connects again")  # SQLAlchemy retries

    return engine


def _alive(dbapi_conn) -> bool:
    """One empty query at the protocol level: no transaction begun, nothing for the caller to roll back."""
    pgconn = dbapi_conn.pgconn
    return pgconn.status == ConnStatus.OK and pgconn.exec_(b"").status == ExecStatus.EMPTY_QUERY


def single_statements(engine: Engine) -> Engine:
    """``engine``'s pool with each connection in autocommit, for work that is one statement: a statement is its own
    transaction, so the BEGIN and COMMIT (or ROLLBACK) round trips around it are saved (three of a question's five
    transactions were one statement)."""
    return engine.execution_options(isolation_level="AUTOCOMMIT")


def engine_for(dsn: str | None = None) -> Engine:
    """One engine per DSN in a process; with none, the settings' DSN as they are now (not as they were when the
    first engine was made: a process whose settings change gets the engine of its new database)."""
    return _engine(dsn or get_settings().app_dsn)


@lru_cache(maxsize=4)
def _engine(dsn: str) -> Engine:
    return make_engine(dsn)


def driver_rows(conn: Connection, sql: str, params: Mapping[str, Any], binary: bool = False) -> list[Any]:
    """The rows of ``sql`` (psycopg's ``%(name)s`` placeholders) as named tuples, run by psycopg itself on ``conn``'s
    own connection and transaction. Why: for the statements every question runs, SQLAlchemy's own work per
    statement (cache key, parameters, result metadata) costs as much CPU as psycopg's (the dense list: 0.36 ms
    through SQLAlchemy, 0.17 ms direct). ``binary``: Postgres' binary format, for the statements that return
    vectors (100 vectors of 384 parsed from text: 9.9 ms of CPU; read in binary: 0.8 ms)."""
    driver = conn.connection.driver_connection
    assert driver is not None, "a live SQLAlchemy connection has its DBAPI connection"
    try:
        with driver.cursor(binary=binary, row_factory=namedtuple_row) as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description is not None else []
    except psycopg.Error as exc:  # as SQLAlchemy would raise it: callers catch OperationalError, IntegrityError, ...
        if driver.closed or driver.pgconn.status != ConnStatus.OK:
            conn.invalidate(exc)  # a broken connection never goes back to the pool
        raise DBAPIError.instance(sql, params, exc, psycopg.Error, hide_parameters=True) from exc


_SEPARATOR = "\x1f"  # ASCII unit separator: in no id, key or hash


def _bound_list(name: str) -> str:
    """The list bound as ``name`` by ``joined``, as a Postgres text array."""
    return f"string_to_array(%({name})s, chr({ord(_SEPARATOR)}))"


def any_of(column: str, name: str) -> str:
    """``column = ANY(<the list bound as name>)`` for a list bound by ``joined``."""
    return f"{column} = ANY({_bound_list(name)})"


def each_of(name: str) -> str:
    """The list bound by ``joined`` as rows ``(value, ord)`` in its order: ``FROM {each_of('ids')} AS f(id, ord)``."""
    return f"unnest({_bound_list(name)}) WITH ORDINALITY"


def joined(values: Sequence[str]) -> str:
    """A list of ids as one text parameter for ``any_of``. Why: psycopg dumps a Python list element by element in
    Python (84 chunk ids: 0.25 ms of CPU, most of a statement's); one string is dumped at once."""
    if any(_SEPARATOR in value for value in values):
        raise ValueError("an id holds the list separator U+001F")
    return _SEPARATOR.join(values)


def as_array(value) -> np.ndarray:
    """psycopg returns ``pgvector.Vector``; SQLAlchemy paths may return lists or numpy arrays."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
