"""Real servers without Docker: embedded Postgres+pgvector and a Kafka-protocol broker.

``up`` is idempotent and records what *it* started in an owner file, so ``down``
with that file stops only those servers (by PID), never someone else's.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from urllib.parse import urlparse

from ..config import Settings
from .broker import EmbeddedBroker
from .postgres import PG_SYSTEM_USER, EmbeddedPostgres, ensure_system_user


def servers(settings: Settings) -> tuple[EmbeddedPostgres, EmbeddedBroker]:
    return (EmbeddedPostgres(settings.state_dir, settings.pg_port),
            EmbeddedBroker(settings.state_dir, settings.broker_port, settings.broker))


def database_name(settings: Settings) -> str:
    return urlparse(settings.database_url).path.lstrip("/") or "postgres"


def secure_state_dir(state: Path) -> None:
    """The state folder holds every message the broker stored, passwords and keys: owner-only.

    Files become 0600 and folders 0700 (new ones too: the umask is 077). The
    folder itself is 0710 with group ``citestream-pg`` when that user exists, so
    Postgres can reach ``pg/`` (its own, 0700) and nothing else. ``pg/`` is left
    to Postgres; ``pginstall`` copies keep their execute bits.
    """
    os.umask(0o077)
    state.mkdir(parents=True, exist_ok=True)
    for entry in state.iterdir():
        if entry.name == "pg" or entry.is_symlink():
            continue
        paths = [entry] + ([p for p in entry.rglob("*") if not p.is_symlink()] if entry.is_dir() else [])
        for path in paths:
            mode = path.lstat().st_mode
            keep_exec = mode & stat.S_IXUSR and not stat.S_ISDIR(mode)
            path.chmod(0o700 if stat.S_ISDIR(mode) or keep_exec else 0o600)
    state.chmod(0o700)
    if os.geteuid() == 0:
        ensure_system_user()
        shutil.chown(state, group=PG_SYSTEM_USER)
        state.chmod(0o710)


def up(settings: Settings, owner_file: Path | None = None) -> list[str]:
    secure_state_dir(settings.state_dir)
    pg, broker = servers(settings)
    started = []
    if pg.start():
        started.append("postgres")
    if pg.moved_to is not None:
        print(f"{PG_SYSTEM_USER}, the user the embedded Postgres runs as, cannot enter {settings.state_dir}: "
              f"Postgres' files are in {pg.moved_to} ({settings.state_dir / 'pg'} links there)")
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
