"""The anchored ledger: signed checkpoints outside Postgres catch what a superuser can do to the chain inside it.

A superuser can disable the append-only triggers, rewrite a row and recompute every hash after it, or delete the
newest rows: the chain stays internally consistent, so only the checkpoints (HMAC-signed with a key the database
never sees, in a file outside it) can tell. Each test has its own database, key and checkpoint file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import datetime, UTC

import psycopg
import pytest

from citestream.config import PROJECT_ROOT
from citestream.store import Ledger, LedgerEntry
from citestream.store.anchors import AnchorFile, Checkpoint, ledger_name, load_key, write_checkpoint
from citestream.store.db import make_engine
from citestream.store.ledger import GENESIS_HASH, row_hash

TRIGGERS = ("audit_ledger_no_update_delete", "audit_ledger_no_truncate")


@pytest.fixture()
def anchored(migrated_database, tmp_path):
    engine = make_engine(migrated_database)
    ledger = Ledger(engine)
    for i in range(5):
        ledger.append(LedgerEntry(f"anchor-{i}-{uuid.uuid4().hex[:6]}", "generate", f"{i:02d}" * 32, "extractive",
                                  "p", "idx-1", datetime(2026, 1, 1, 12, i, tzinfo=UTC), {"n": i}))
    key_file, anchor_path = tmp_path / "keys" / "ledger.key", tmp_path / "anchors.jsonl"
    anchors = AnchorFile(anchor_path, load_key(key_file, create=True))
    checkpoint = write_checkpoint(ledger, anchors, ledger_name(migrated_database))
    yield migrated_database, ledger, anchors, checkpoint, key_file
    engine.dispose()


def _verify(url, ledger, anchors):
    checkpoints, forged = anchors.read(ledger_name(url))
    return ledger.verify(checkpoints), forged


def _as_superuser(url: str, *statements: tuple[str, tuple]) -> None:
    """What a hostile superuser does: triggers off, change rows, recompute every hash after them, triggers on."""
    with psycopg.connect(url, autocommit=True) as conn:
        for trigger in TRIGGERS:
            conn.execute(f"ALTER TABLE audit_ledger DISABLE TRIGGER {trigger}")
        for sql, params in statements:
            conn.execute(sql, params)
        prev = GENESIS_HASH
        for row in conn.execute("SELECT id, request_id, stage, prompt_sha256, model, policy_version, index_version, "
                                "created_at, payload FROM audit_ledger ORDER BY id").fetchall():
            entry = LedgerEntry(*row[1:])
            new = row_hash(prev, entry)
            conn.execute("UPDATE audit_ledger SET prev_hash = %s, row_hash = %s WHERE id = %s", (prev, new, row[0]))
            prev = new
        for trigger in TRIGGERS:
            conn.execute(f"ALTER TABLE audit_ledger ENABLE TRIGGER {trigger}")


def test_files_are_owner_only_and_the_signature_covers_every_field(anchored, tmp_path):
    url, ledger, anchors, checkpoint, key_file = anchored
    assert oct(key_file.stat().st_mode & 0o777) == "0o600" and oct(anchors.path.stat().st_mode & 0o777) == "0o600"
    assert (checkpoint.row_id, checkpoint.count) == (ledger.head()[0], 5)
    report, forged = _verify(url, ledger, anchors)
    assert report.ok and report.checkpoints == 1 and forged == 0
    assert write_checkpoint(ledger, anchors, ledger_name(url)) == checkpoint  # nothing new: no second line
    # a checkpoint written without the key (or edited) does not count, and is reported
    fake = Checkpoint(checkpoint.ledger, checkpoint.row_id + 10, "f" * 64, 99, checkpoint.created_at, "0" * 64)
    with open(anchors.path, "a") as out:
        import dataclasses
        import json

        out.write(json.dumps(dataclasses.asdict(fake)) + "\n")
    report, forged = _verify(url, ledger, anchors)
    assert report.ok and forged == 1


def test_a_superuser_rewrite_that_recomputes_every_hash_is_reported(anchored):
    url, ledger, anchors, checkpoint, _ = anchored
    assert ledger.verify().ok
    _as_superuser(url, ("UPDATE audit_ledger SET model = 'forged' WHERE id = (SELECT min(id) + 1 FROM audit_ledger)",
                        ()))
    assert ledger.verify().ok, "the recomputed chain is consistent on its own: only the checkpoint can tell"
    report, _ = _verify(url, ledger, anchors)
    assert not report.ok and report.reason.startswith("REWRITTEN") and report.first_broken_id == checkpoint.row_id


def test_a_deleted_tail_is_reported_as_truncation(anchored):
    url, ledger, anchors, checkpoint, _ = anchored
    _as_superuser(url, ("DELETE FROM audit_ledger WHERE id >= (SELECT max(id) - 1 FROM audit_ledger)", ()))
    assert ledger.verify().ok  # what is left is a valid chain
    report, _ = _verify(url, ledger, anchors)
    assert not report.ok and report.reason.startswith("TRUNCATED")
    assert f"row {checkpoint.row_id}" in report.reason and "3 rows" in report.reason


def test_a_deleted_middle_row_with_the_chain_recomputed_is_reported(anchored):
    url, ledger, anchors, _, _ = anchored
    _as_superuser(url, ("DELETE FROM audit_ledger WHERE id = (SELECT min(id) + 2 FROM audit_ledger)", ()))
    report, _ = _verify(url, ledger, anchors)
    assert not report.ok and report.reason.startswith("REWRITTEN")


def test_verify_holds_in_a_session_time_zone_other_than_utc(anchored):
    url, _, anchors, _, _ = anchored
    for zone in ("Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"):
        joiner = "&" if "?" in url else "?"
        engine = make_engine(f"{url}{joiner}options=-c%20TimeZone%3D{zone.replace('/', '%2F')}")
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW TimeZone").scalar_one() == zone
        report, _ = _verify(url, Ledger(engine), anchors)
        assert report.ok and report.checkpoints == 1, (zone, report)
        engine.dispose()


def test_ledger_cli_anchor_then_verify_reports_a_rewrite(anchored, tmp_path):
    url, _ledger, _anchors, _, key_file = anchored
    env = {**os.environ, "CITESTREAM_DATABASE_URL": url, "CITESTREAM_LEDGER_KEY_FILE": str(key_file),
           "CITESTREAM_LEDGER_ANCHOR_FILE": str(tmp_path / "cli-anchors.jsonl")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "citestream", "ledger", *args], capture_output=True, text=True,
                              env=env, cwd=PROJECT_ROOT, timeout=120)

    refused = cli("verify")  # no checkpoint file yet: not "ok" unless told to go without
    assert refused.returncode == 1 and "NOT VERIFIED: the checkpoint file" in refused.stdout, refused.stdout
    first = cli("verify", "--allow-missing-anchors")
    assert first.returncode == 0 and "no signed checkpoint" in first.stdout, first.stdout + first.stderr
    anchored_now = cli("anchor")
    assert anchored_now.returncode == 0 and "checkpoint: row" in anchored_now.stdout, anchored_now.stderr
    ok = cli("verify")
    assert ok.returncode == 0 and "matches 1 signed checkpoints" in ok.stdout
    env["CITESTREAM_LEDGER_KEY_FILE"] = str(tmp_path / "no-such.key")
    keyless = cli("verify")
    assert keyless.returncode == 1 and "NOT VERIFIED: the signing key" in keyless.stdout, keyless.stdout
    env["CITESTREAM_LEDGER_KEY_FILE"] = str(key_file)
    _as_superuser(url, ("UPDATE audit_ledger SET payload = '{\"n\": 42}'::jsonb "
                        "WHERE id = (SELECT min(id) FROM audit_ledger)", ()))
    broken = cli("verify")
    assert broken.returncode == 1 and "BROKEN" in broken.stdout and "REWRITTEN" in broken.stdout


def _lines(anchors) -> list[str]:
    return anchors.path.read_text().splitlines()


def test_checkpoints_are_chained_so_a_line_removed_or_moved_breaks_the_next(anchored):
    url, ledger, anchors, first, _ = anchored
    name = ledger_name(url)
    ledger.append(LedgerEntry(f"anchor-more-{uuid.uuid4().hex[:6]}", "generate", "ab" * 32, "extractive", "p",
                              "idx-1", datetime(2026, 1, 1, 13, tzinfo=UTC), {"n": 9}))
    second = write_checkpoint(ledger, anchors, name)
    assert (first.seq, second.seq, second.prev) == (1, 2, first.mac)
    assert _verify(url, ledger, anchors) == (ledger.verify([first, second]), 0)
    lines = _lines(anchors)
    anchors.path.write_text(lines[1] + "\n")  # the first line removed: the second's link to it fails
    assert anchors.read(name)[1] == 1
    anchors.path.write_text("\n".join(reversed(lines)) + "\n")  # moved
    assert anchors.read(name)[1] >= 1


def test_a_line_that_is_no_checkpoint_is_counted_never_a_crash_and_checkpoints_go_on(anchored):
    """Issue 48: a non-ASCII ``mac`` crashed ``ledger verify`` (hmac.compare_digest) and, raised in the worker's
    thread at every read, silently stopped its checkpoints."""
    url, ledger, anchors, first, _ = anchored
    name = ledger_name(url)
    import json

    with open(anchors.path, "a", encoding="utf-8") as out:
        for bad in ({**json.loads(_lines(anchors)[0]), "mac": "é" * 64}, {"ledger": name, "row_id": "1"},
                    [1, 2], {**json.loads(_lines(anchors)[0]), "count": True}):
            out.write(json.dumps(bad, ensure_ascii=False) + "\n")
        out.write("{not json\n")
    good, bad = anchors.read(name)
    assert good == [first] and bad == 5
    ledger.append(LedgerEntry(f"anchor-after-{uuid.uuid4().hex[:6]}", "generate", "cd" * 32, "extractive", "p",
                              "idx-1", datetime(2026, 1, 1, 14, tzinfo=UTC), {"n": 10}))
    assert write_checkpoint(ledger, anchors, name).seq == 2  # the worker's next checkpoint is written


def test_a_worker_that_finds_its_checkpoints_gone_chains_on_from_its_own_so_the_gap_shows(anchored):
    url, ledger, anchors, first, _ = anchored
    name = ledger_name(url)
    anchors.path.write_text("")  # emptied while the worker runs
    ledger.append(LedgerEntry(f"anchor-gap-{uuid.uuid4().hex[:6]}", "generate", "ef" * 32, "extractive", "p",
                              "idx-1", datetime(2026, 1, 1, 15, tzinfo=UTC), {"n": 11}))
    again = write_checkpoint(ledger, anchors, name, after=first)
    assert (again.seq, again.prev) == (2, first.mac)
    assert anchors.read(name) == ([again], 1)  # its link to checkpoint 1, which the file lost, is the break


def test_verify_refuses_an_emptied_or_cut_checkpoint_file_when_old_rows_are_uncovered(anchored, tmp_path):
    url, _ledger, anchors, _, key_file = anchored
    env = {**os.environ, "CITESTREAM_DATABASE_URL": url, "CITESTREAM_LEDGER_KEY_FILE": str(key_file),
           "CITESTREAM_LEDGER_ANCHOR_FILE": str(anchors.path)}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "citestream", "ledger", *args], capture_output=True, text=True,
                              env=env, cwd=PROJECT_ROOT, timeout=120)

    assert cli("verify").returncode == 0
    anchors.path.write_text("")  # emptied: the rows (written in January) are no longer covered
    emptied = cli("verify")
    assert emptied.returncode == 1 and "no signed checkpoint covers them" in emptied.stdout, emptied.stdout
    assert "5 rows" in emptied.stdout
    assert cli("verify", "--allow-missing-anchors").returncode == 0  # the operator's choice: the chain alone
    os.chmod(key_file, 0o644)
    loose = cli("verify")
    assert loose.returncode == 1 and "is refused" in loose.stdout and "mode 0644" in loose.stdout
