"""Real servers without Docker: embedded Postgres+pgvector and a Kafka-protocol broker.

``up`` is idempotent and records what *it* started in an owner file, so ``down``
with that file stops only those servers (by PID), never someone else's.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

from ..config import Settings
from .broker import EmbeddedBroker
from .postgres import EmbeddedPostgres


def servers(settings: Settings) -> tuple[EmbeddedPostgres, EmbeddedBroker]:
    return (EmbeddedPostgres(settings.state_dir, settings.pg_port),
            EmbeddedBroker(settings.state_dir, settings.broker_port, settings.broker))


def database_name(settings: Settings) -> str:
    return urlparse(settings.database_url).path.lstrip("/") or "postgres"


def up(settings: Settings, owner_file: Path | None = None) -> list[str]:
    pg, broker = servers(settings)
    started = []
    if pg.start():
        started.append("postgres")
    if broker.start():
        started.append("broker")
    pg.ensure_database(database_name(settings))
    if owner_file is not None:
        previous = json.loads(owner_file.read_text()) if owner_file.exists() else []
        owner_file.parent.mkdir(parents=True, exist_ok=True)
        owner_file.write_text(json.dumps(sorted(set(previous) | set(started))))
    return started


def down(settings: Settings, owner_file: Path | None = None) -> list[str]:
    """Stop what ``owner_file`` says was started (or everything when no file is given)."""
    pg, broker = servers(settings)
    if owner_file is not None:
        if not owner_file.exists():
            return []
        names = json.loads(owner_file.read_text())
        owner_file.unlink()
    else:
        names = ["postgres", "broker"]
    if "broker" in names:
        broker.stop()
    if "postgres" in names:
        pg.stop()
    return names


def status(settings: Settings) -> dict[str, bool]:
    pg, broker = servers(settings)
    return {"postgres": pg.is_running(), "broker": broker.is_running()}
