"""One SQLAlchemy engine per process (psycopg 3 driver, pooled), with pgvector registered.

``engine_for()`` without a DSN connects as the least-privileged application role
(``Settings.app_dsn``); owners and tests pass their DSN. Local DSNs without a
password use the embedded server's passfile (``Settings.resolve_dsn``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from pgvector.psycopg import register_vector
from psycopg.rows import namedtuple_row
from sqlalchemy import Connection, Engine, create_engine, event

from ..config import get_settings


def sqlalchemy_url(dsn: str) -> str:
    scheme, rest = get_settings().resolve_dsn(dsn).split("://", 1)
    return f"postgresql+psycopg://{rest}" if scheme in ("postgresql", "postgres") else dsn


def make_engine(dsn: str) -> Engine:
    # 5 kept, up to 15: the agents of one worker hold at most 13 at once (docs/retrieval.md, the pool)
    engine = create_engine(sqlalchemy_url(dsn), pool_size=5, max_overflow=10, pool_pre_ping=True)

    @event.listens_for(engine, "connect")
    def _register(dbapi_conn, _record):  # noqa: ANN001 - SQLAlchemy event signature
        try:
            register_vector(dbapi_conn)
        except Exception:  # the extension may not exist yet (fresh database before migrate)
            dbapi_conn.rollback()

    return engine


@lru_cache(maxsize=4)
def engine_for(dsn: str | None = None) -> Engine:
    return make_engine(dsn or get_settings().app_dsn)


def driver_rows(conn: Connection, sql: str, params: Mapping[str, Any], binary: bool = False) -> list[Any]:
    """The rows of ``sql`` (psycopg's ``%(name)s`` placeholders) as named tuples, run by psycopg itself on ``conn``'s
    own connection and transaction. Why: for the statements every question runs, SQLAlchemy's own work per
    statement (cache key, parameters, result metadata) costs as much CPU as psycopg's (the dense list: 0.36 ms
    through SQLAlchemy, 0.17 ms direct). ``binary``: Postgres' binary format, for the statements that return
    vectors (100 vectors of 384 parsed from text: 9.9 ms of CPU; read in binary: 0.8 ms)."""
    driver = conn.connection.driver_connection
    assert driver is not None, "a live SQLAlchemy connection has its DBAPI connection"
    with driver.cursor(binary=binary, row_factory=namedtuple_row) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []


_SEPARATOR = "\x1f"  # ASCII unit separator: in no id, key or hash


def any_of(column: str, name: str) -> str:
    """``column = ANY(<the list bound as name>)`` for a list bound by ``joined``."""
    return f"{column} = ANY(string_to_array(%({name})s, chr(31)))"


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
