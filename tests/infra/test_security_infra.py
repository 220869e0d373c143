"""Roles, authentication and secrets: what a local user, a database user and a provider's error body can reach.

Runs against the session's embedded servers (started by tests/conftest.py through ``infra.up``).
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import httpx
import psycopg
import pytest

from citestream import infra, metrics
from citestream.config import Settings
from citestream.llm import LLMError, OpenAIBackend

from tests.support.common import as_app_role
from tests.support.reliability import free_port


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture()
def embedded(settings):
    if settings.infra == "docker":
        pytest.skip("the embedded servers' own settings")
    return infra.servers(settings)[0]


def test_postgres_wants_a_password_on_tcp_and_keeps_its_socket_to_itself(embedded, settings):
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{settings.pg_port}/postgres", connect_timeout=5)
    hba = [line.split() for line in (embedded.data / "pg_hba.conf").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    assert hba and all(fields[-1] == "scram-sha-256" for fields in hba)
    assert _mode(embedded.socket_dir) == 0o700 and _mode(embedded.root) == 0o700
    assert _mode(embedded.pgpass) == 0o600
    assert set(embedded.passwords()) == {"postgres", "citestream_app", "citestream_page"}
    socket_file = embedded.socket_dir / f".s.PGSQL.{settings.pg_port}"
    assert _mode(socket_file) == 0o700
    with psycopg.connect(settings.owner_dsn) as conn:  # the passfile, found without anyone typing a password
        assert conn.execute("SHOW password_encryption").fetchone()[0] == "scram-sha-256"
        stored = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'citestream_app'").fetchone()[0]
    assert stored.startswith("SCRAM-SHA-256$")


def test_state_files_are_owner_only(settings, embedded):
    state = settings.state_dir
    assert _mode(state) in (0o700, 0o710)
    loose = [p for p in state.rglob("*") if not p.is_symlink() and p.parts[len(state.parts)] != "pg"
             and p.is_file() and _mode(p) & 0o077]
    assert loose == [], f"group/world-readable state files: {loose[:5]}"


def test_the_worker_role_appends_but_cannot_rewrite_provenance_or_requests_history(database):
    app_url = as_app_role(database)
    with psycopg.connect(app_url, autocommit=True) as conn:
        assert conn.execute("SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                            "WHERE rolname = current_user").fetchone() == (False, False, False)
        conn.execute("INSERT INTO provenance (request_id, stage, sha256) VALUES ('sec-1', 'assemble', 'ab') "
                     "ON CONFLICT DO NOTHING")
        for sql in ("UPDATE provenance SET sha256 = 'cd'", "DELETE FROM provenance", "TRUNCATE provenance",
                    "TRUNCATE requests", "CREATE TABLE side_door (x int)", "DROP TABLE provenance"):
            with pytest.raises((psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedObject)):
                conn.execute(sql)


def test_the_page_role_reads_what_the_page_shows_and_changes_nothing(database, settings):
    """Issue 48: the page connected as the worker's role, which may UPDATE and DELETE documents, chunks and
    requests. Its own role reads and does nothing else; its password is in a file of its own."""
    page_url = as_app_role(database, settings.page_db_user)
    assert "keys/page.pgpass" in page_url and "keys/page.pgpass" in settings.page_dsn
    with psycopg.connect(page_url, autocommit=True) as conn:
        assert conn.execute("SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
                            "WHERE rolname = current_user").fetchone() == (False, False, False)
        for table in ("documents", "chunks", "index_versions", "requests", "audit_ledger", "provenance"):
            conn.execute(f"SELECT count(*) FROM {table}")
        for statement in ("UPDATE documents SET title = title", "DELETE FROM chunks", "DELETE FROM requests",
                          "UPDATE requests SET redrives = 0", "INSERT INTO index_versions (corpus_digest, doc_count, "
                          "chunk_count) VALUES ('x', 0, 0)", "INSERT INTO provenance (request_id, stage, sha256) "
                          "VALUES ('p', 'assemble', 'ab')", "TRUNCATE documents", "CREATE TABLE side_door (x int)",
                          "SELECT * FROM alembic_version"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


def test_metrics_listen_on_loopback_by_default():
    port = free_port(29760)
    assert metrics.serve(port) is True
    local = f"{0x0100007F:08X}:{port:04X}"  # 127.0.0.1:port as /proc/net/tcp writes it
    listening = [line.split()[1] for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
                 if line.split()[3] == "0A" and line.split()[1].endswith(f":{port:04X}")]
    assert listening == [local]
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


def test_secrets_never_print():
    s = Settings(openai_api_key="sk-live-abcdef123456", app_db_password="app-pw-123", broker_sasl_password="kpw")
    shown = repr(s) + str(s.model_dump())
    assert "sk-live-abcdef123456" not in shown and "app-pw-123" not in shown and "kpw'" not in shown
    assert "app-pw-123" in s.app_dsn  # given on purpose (Docker): used, not shown


def test_a_provider_error_body_is_cut_and_scrubbed_before_it_reaches_a_record():
    body = ('{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz. '
            'Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz", "detail": "' + "x" * 5000 + '"}}')
    backend = OpenAIBackend("http://provider.invalid/v1", "m", api_key="sk-proj-abcdefghijklmnopqrstuvwxyz")
    backend._client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(401, text=body)))
    with pytest.raises(LLMError) as caught:
        backend.complete("prompt")
    message = str(caught.value)
    assert message.startswith("HTTP 401: ") and len(message) <= 140
    assert "abcdefghijklmnop" not in message


def test_a_cluster_made_with_trust_by_an_older_version_is_moved_to_scram(tmp_path_factory):
    """A developer's existing state folder (initdb --auth=trust) is secured on its next start, data kept."""
    import shutil
    import tempfile
    from pathlib import Path

    from citestream.infra.postgres import EmbeddedPostgres

    root = Path(tempfile.mkdtemp(prefix="citestream-trust-"))  # not under pytest's 0700 folders: Postgres runs
    root.chmod(0o755)                                            # as its own system user
    pg = EmbeddedPostgres(root, free_port(25800))
    try:
        pg.start()
        pg.ensure_database("kept")
        pg.stop()
        hba = pg.data / "pg_hba.conf"  # what `initdb --auth=trust` wrote, and no passfile yet
        hba.write_text(hba.read_text().replace("scram-sha-256", "trust"))
        pg.pgpass.unlink()
        pg.start()
        assert all(line.split()[-1] == "scram-sha-256" for line in hba.read_text().splitlines()
                   if line.strip() and not line.startswith("#"))
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(f"postgresql://postgres@127.0.0.1:{pg.port}/kept", connect_timeout=5)
        with psycopg.connect(pg.dsn("citestream_app", "kept")) as conn:
            assert conn.execute("SELECT current_database()").fetchone()[0] == "kept"
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


def test_the_worker_and_the_page_get_a_passfile_of_the_app_role_alone(embedded, settings):
    """The app role's password is in a file of its own, the one its DSN is handed; the owner's is not in it, so
    with it the superuser cannot connect. (One OS user can still open the owner's file: docs/security.md.)"""
    from urllib.parse import parse_qs, urlsplit

    app_file = Path(parse_qs(urlsplit(settings.app_dsn).query)["passfile"][0])
    assert app_file == settings.state_dir / "keys" / "app.pgpass" and _mode(app_file) == 0o600
    assert {line.split(":")[3] for line in app_file.read_text().splitlines()} == {"citestream_app"}
    page_file = settings.state_dir / "keys" / "page.pgpass"
    assert _mode(page_file) == 0o600
    assert {line.split(":")[3] for line in page_file.read_text().splitlines()} == {"citestream_page"}
    assert {line.split(":")[3] for line in embedded.pgpass.read_text().splitlines()} == {"postgres"}
    assert "keys" not in settings.owner_dsn and "pg/pgpass" in settings.owner_dsn
    derived = settings.model_copy(update={"database_url": settings.owner_dsn}).app_dsn  # an owner DSN with its file
    assert "keys/app.pgpass" in derived and "pg/pgpass" not in derived
    with psycopg.connect(settings.app_dsn) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == "citestream_app"
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{settings.pg_port}/postgres?passfile={app_file}",
                        connect_timeout=5)


def _private_clone(tmp_root: Path) -> tuple[Path, dict[str, str]]:
    """A state folder inside a 0700 folder (a clone in ``mktemp -d``), with ports and a PG_HOME of its own."""
    tmp_root.chmod(0o755)
    private = tmp_root / "private"
    private.mkdir(mode=0o700)
    home = tmp_root / "pg-home"  # where Postgres' files go instead of /var/lib/citestream-pg
    env = {**os.environ, "CITESTREAM_STATE_DIR": str(private / "clone" / ".state"), "CITESTREAM_PG_HOME": str(home),
           "CITESTREAM_PG_PORT": str(free_port(25900)), "CITESTREAM_BROKER_PORT": str(free_port(25950))}
    for name in ("CITESTREAM_DATABASE_URL", "CITESTREAM_BROKER_URL"):
        env.pop(name, None)
    return private, env


def test_servers_of_a_folder_postgres_cannot_enter_keep_its_files_where_it_can_and_say_where():
    """A clone in a 0700 folder (``mktemp -d``, a private home): ``infra up`` starts Postgres with its files in a
    folder its user can enter, linked from the state folder, and prints where (issue 47: it used to stop there);
    ``infra down`` stops what it started."""
    import shutil
    import subprocess
    import sys
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("Postgres runs as another user only when started as root")
    root = Path(tempfile.mkdtemp(prefix="citestream-private-"))  # not under pytest's own 0700 folders
    private, env = _private_clone(root)
    owner = root / "owner.json"
    state = private / "clone" / ".state"
    try:
        up = subprocess.run([sys.executable, "-m", "citestream", "infra", "up", "--owner-file", str(owner)],
                            capture_output=True, text=True, env=env, timeout=180)
        assert up.returncode == 0, up.stderr
        target = (state / "pg").resolve()
        assert (state / "pg").is_symlink() and target.parent.parent == root / "pg-home"
        assert f"cannot enter {state}: Postgres' files are in {target}" in up.stdout
        assert (target / "data" / "PG_VERSION").exists() and "started now: postgres, broker" in up.stdout
    finally:
        down = subprocess.run([sys.executable, "-m", "citestream", "infra", "down", "--owner-file", str(owner)],
                              capture_output=True, text=True, env=env, timeout=120)
        shutil.rmtree(root, ignore_errors=True)
    assert "stopped: broker, postgres" in down.stdout, down.stdout + down.stderr


def test_a_cluster_already_inside_a_folder_postgres_cannot_enter_stops_with_one_line():
    """Data already made there is never moved: ``infra up`` says why and what to do in one line, exit 2."""
    import shutil
    import subprocess
    import sys
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("Postgres runs as another user only when started as root")
    root = Path(tempfile.mkdtemp(prefix="citestream-private-"))
    private, env = _private_clone(root)
    data = private / "clone" / ".state" / "pg" / "data"
    data.mkdir(parents=True)
    (data / "PG_VERSION").write_text("18\n")
    try:
        done = subprocess.run([sys.executable, "-m", "citestream", "infra", "up"], capture_output=True, text=True,
                              env=env, timeout=120)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot enter {private} (mode 0700)" in lines[0] and f"chmod o+x {private}" in lines[0], lines[0]


def test_a_log_line_never_holds_a_line_break_or_direction_mark_from_what_it_logs(tmp_path):
    """Whatever a record carries into a log message (a docId, a path, a reason), it stays on its own line and in
    its order: every command installs the record factory first (``cli.main``)."""
    import subprocess
    import sys

    script = ("import contextlib, io, logging, sys\n"
              "from citestream.cli import main\n"
              "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
              "    main(['--help'])\n"
              "logging.basicConfig(stream=sys.stdout, level=logging.INFO, format='%(levelname)s %(message)s')\n"
              "logging.getLogger('citestream.ingest').warning('ingest %s: %s', sys.argv[1], 'authority unknown')\n")
    hostile = "doc\r\nERROR forged line\u202egnp.exe\u2028more"
    out = subprocess.run([sys.executable, "-c", script, hostile], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["WARNING ingest doc\\x0d\\x0aERROR forged line\\u202egnp.exe\\u2028more: "
                                "authority unknown"]
