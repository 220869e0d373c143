"""The audit ledger through the CLI: `ledger verify` finds a tampered row, `ledger replay` rebuilds prompts.

Each test gets a fresh, migrated database so its chain is its own. Tampering
is done the only way the database allows it: as the owner, with the
append-only trigger disabled for a moment.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import psycopg
import pytest

from citestream.config import PROJECT_ROOT
from citestream.qa.generate import generate
from citestream.llm import ExtractiveBackend
from citestream.ops.replay import replay
from citestream.models.assembly import PromptBuildResult
from citestream.qa.assemble.prompt import TEMPLATE_VERSION
from citestream.store import Ledger
from citestream.store.db import make_engine

from tests.support.bundles import prompt_record

TRIGGER = "audit_ledger_no_update_delete"


@pytest.fixture()
def ledger_db(migrated_database):
    """A migrated database of this test's own, and its ledger: each chain starts empty."""
    engine = make_engine(migrated_database)
    yield migrated_database, Ledger(engine)
    engine.dispose()


def cli(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citestream", "ledger", *args], capture_output=True, text=True,
                          env={**os.environ, "CITESTREAM_DATABASE_URL": url}, cwd=PROJECT_ROOT, timeout=120)


QUESTIONS = ["How much do DOACs reduce stroke risk in atrial fibrillation?",
             "What does lecanemab target?",
             "When must sponsors submit the final study report?"]


def fill(ledger: Ledger) -> list[str]:
    ids = []
    for i, question in enumerate(QUESTIONS):
        rid = f"led-{i}-{uuid.uuid4().hex[:6]}"
        generate(prompt_record(rid, question), ExtractiveBackend(), ledger)
        ids.append(rid)
    return ids


def tamper(url: str, sql: str, params=()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE audit_ledger DISABLE TRIGGER {TRIGGER}")
        try:
            conn.execute(sql, params)
        finally:
            conn.execute(f"ALTER TABLE audit_ledger ENABLE TRIGGER {TRIGGER}")


def row_id(url: str, request_id: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT id FROM audit_ledger WHERE request_id = %s", (request_id,)).fetchone()[0]


def test_one_row_per_execution_with_what_replay_needs(ledger_db):
    _url, ledger = ledger_db
    record = prompt_record("led-once", QUESTIONS[0])
    generate(record, ExtractiveBackend(), ledger)
    generate(record, ExtractiveBackend(), ledger)  # a redelivered record: still one row for this prompt
    rows = ledger.entries_for("led-once")
    assert len(rows) == 1
    payload = rows[0]["payload"]
    assert rows[0]["prompt_sha256"] == record.prompt.prompt_sha256 and rows[0]["model"] == "extractive-v3"
    assert payload["question"] == QUESTIONS[0] and payload["template_version"] == TEMPLATE_VERSION
    assert payload["answer_bundle"]["evidence_block_text"] == record.answer_bundle.evidence_block_text
    assert payload["generation_status"] == "OK" and payload["attempts"] == 1 and len(payload["output_sha256"]) == 64
    no_evidence = record.model_copy(update={
        "request_id": "led-none", "prompt": PromptBuildResult(build_status="NO_EVIDENCE",
                                                              template_version=TEMPLATE_VERSION),
        "answer_bundle": record.answer_bundle.model_copy(update={
            "assembly_status": "NO_EVIDENCE", "selected_evidence": [], "evidence_block_text": "", "anchor_map": {}})})
    assert generate(no_evidence, ExtractiveBackend(), ledger).generation_status == "NO_EVIDENCE"
    assert ledger.entries_for("led-none") == []  # the model was never called


def test_verify_through_the_cli_names_the_tampered_row(ledger_db):
    url, ledger = ledger_db
    ids = fill(ledger)
    ok = cli(url, "verify", "--allow-missing-anchors")  # this database's chain alone: no checkpoint is its own
    assert ok.returncode == 0 and "ledger ok: 3 rows, chain intact" in ok.stdout, ok.stderr

    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the trigger is back on after tampering
        tamper(url, "UPDATE audit_ledger SET model = 'forged' WHERE request_id = %s", (ids[1],))
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE audit_ledger SET model = 'again' WHERE request_id = %s", (ids[1],))
    broken = cli(url, "verify", "--allow-missing-anchors")
    assert broken.returncode == 1
    assert f"ledger BROKEN at row id {row_id(url, ids[1])}: row content does not match its hash" in broken.stdout


def test_verify_detects_a_deleted_row(ledger_db):
    url, ledger = ledger_db
    ids = fill(ledger)
    after = row_id(url, ids[2])
    tamper(url, "DELETE FROM audit_ledger WHERE request_id = %s", (ids[1],))
    broken = cli(url, "verify", "--allow-missing-anchors")
    assert broken.returncode == 1
    assert f"BROKEN at row id {after}: prev_hash does not match the previous row" in broken.stdout


def test_replay_rebuilds_the_prompt_byte_for_byte(ledger_db):
    url, ledger = ledger_db
    ids = fill(ledger)
    out = cli(url, "replay", ids[0])
    expected = prompt_record(ids[0], QUESTIONS[0]).prompt.prompt_sha256
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"stored={expected} rebuilt={expected} MATCH" in out.stdout

    missing = cli(url, "replay", "never-asked")
    assert missing.returncode == 2 and "no ledger rows" in missing.stdout


def test_replay_reports_a_changed_question_or_evidence(ledger_db):
    url, ledger = ledger_db
    ids = fill(ledger)
    tamper(url, "UPDATE audit_ledger SET payload = jsonb_set(payload, '{question}', %s::jsonb) "
                "WHERE request_id = %s", ('"What does lecanemab really target?"', ids[1]))
    out = cli(url, "replay", ids[1])
    assert out.returncode == 1 and "MISMATCH: rebuilt prompt differs" in out.stdout
    tamper(url, "UPDATE audit_ledger SET payload = jsonb_set(payload, '{answer_bundle,selected_evidence,0,"
                "sanitized_text}', '\"Apixaban cures everything.\"'::jsonb) WHERE request_id = %s", (ids[2],))
    out = cli(url, "replay", ids[2])
    assert out.returncode == 1 and "evidence_block_text does not match" in out.stdout
    assert [r.ok for r in replay(ledger, ids[0])] == [True]
