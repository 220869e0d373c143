"""Helpers most suites use: request ids, the corpus folder, migrations, and workers on the session's servers."""

from __future__ import annotations

import asyncio
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from citestream.config import PROJECT_ROOT
from citestream.infra.worker import WorkerProcess

__all__ = ["CORPUS", "GOLDEN", "TESTS", "TRAINING_DOCS", "WorkerProcess", "migrate", "new_request_id",
           "own_topics_worker", "sealed_under"]

CORPUS = (PROJECT_ROOT.parent / "shared" / "corpus").resolve()
TRAINING_DOCS = (PROJECT_ROOT.parent / "shared" / "training-docs").resolve()  # never ingested into the corpus' DB
TESTS = Path(__file__).resolve().parent.parent  # tests/
GOLDEN = TESTS / "golden"


def new_request_id(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def migrate(url: str | None = None) -> None:
    """Alembic upgrade to head, on ``url`` or else on the configured database."""
    from alembic import command
    from alembic.config import Config

    from citestream.store.db import sqlalchemy_url

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    if url is not None:
        config.set_main_option("sqlalchemy.url", sqlalchemy_url(url))
    command.upgrade(config, "head")


@contextmanager
def own_topics_worker(settings, name: str, log_path, env: dict[str, str]):
    """A ready worker on topics ``<prefix><name>.`` and a consumer group of its own, so it never takes work meant
    for the session's worker; yields it and the settings that reach its topics."""
    from citestream.topics import create_topics

    prefix = f"{settings.topic_prefix}{name}."
    create_topics(settings.bootstrap_servers, prefix, retention_hours=settings.topic_retention_hours)
    worker = WorkerProcess(log_path, env={
        "CITESTREAM_TOPIC_PREFIX": prefix, "CITESTREAM_APP_ID": f"citestream-{prefix.strip('.').replace('.', '-')}",
        **env})
    try:
        worker.wait_ready()
        yield worker, settings.model_copy(update={"topic_prefix": prefix})
    finally:
        worker.stop()


def as_app_role(url: str, role: str = "citestream_app") -> str:
    """The same database as the application role (or ``role``), with that role's own passfile (never the
    owner's)."""
    from urllib.parse import urlparse, urlunparse

    from citestream.config import get_settings

    parts = urlparse(url)
    return get_settings().resolve_dsn(urlunparse(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}",
                                                                query="")))


def sealed_under(settings, topic: str, since: dict[int, int], key: str, count: int, timeout_s: float = 120) -> list:
    """Every record a worker sealed under ``key`` on ``topic`` since ``since``, read as a consumer reads them (seal
    checked), once ``count`` of them are there."""
    from citestream.ops.client import ReplyReader, read_topic

    reader, deadline = ReplyReader(settings, topic), time.monotonic() + timeout_s
    while True:
        found = [reader.read(r.value) for r in asyncio.run(read_topic(topic, since=since)) if r.key == key.encode()]
        if len(found) >= count or time.monotonic() > deadline:
            assert len(found) == count and None not in found and reader.refused == 0
            return found
        time.sleep(1)
