"""One SQLAlchemy engine per process (psycopg 3 driver, pooled), with pgvector registered.

``engine_for()`` without a DSN connects as the least-privileged application role
(``Settings.app_dsn``); owners and tests pass their DSN. Local DSNs without a
password use the embedded server's passfile (``Settings.resolve_dsn``).
"""

from __future__ import annotations

from functools import lru_cache

from pgvector.psycopg import register_vector
from sqlalchemy import Engine, create_engine, event

from ..config import get_settings


def sqlalchemy_url(dsn: str) -> str:
    scheme, rest = get_settings().resolve_dsn(dsn).split("://", 1)
    return f"postgresql+psycopg://{rest}" if scheme in ("postgresql", "postgres") else dsn


def make_engine(dsn: str) -> Engine:
    engine = create_engine(sqlalchemy_url(dsn), pool_size=5, max_overflow=5, pool_pre_ping=True)

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
