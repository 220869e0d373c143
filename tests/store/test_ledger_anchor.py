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
