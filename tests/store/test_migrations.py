"""Migrations build the schema on an empty database; the ledger is append-only in the database itself."""

from datetime import datetime, UTC

import psycopg
import pytest
from sqlalchemy import create_engine, inspect

from citestream.store.db import sqlalchemy_url

from tests.support.common import migrate


def test_migrations_apply_on_empty_database(empty_database):
    migrate(empty_database)
    engine = create_engine(sqlalchemy_url(empty_database))
    insp = inspect(engine)
    assert {"documents", "chunks", "audit_ledger", "requests", "index_versions"} <= set(insp.get_table_names())
    columns = {c["name"]: c for c in insp.get_columns("chunks")}
    assert {"embedding", "tsv", "page", "section", "authority", "parent_id", "kind"} <= set(columns)
    with engine.connect() as conn:
        indexes = dict(conn.exec_driver_sql(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks'").all())
        embedding_type = conn.exec_driver_sql(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'").scalar_one()
    assert embedding_type == "vector(384)"
    assert "USING hnsw (embedding vector_cosine_ops)" in indexes["chunks_embedding_hnsw_idx"]
    assert "USING gin (tsv)" in indexes["chunks_tsv_gin_idx"]
    assert "(parent_id)" in indexes["chunks_parent_id_idx"]  # the parent list's children, without a scan (0008)
    engine.dispose()
    migrate(empty_database)  # idempotent: a second upgrade is a no-op


def test_migrated_schema_matches_table_definitions(empty_database):
    from citestream.store.tables import metadata

    migrate(empty_database)
    engine = create_engine(sqlalchemy_url(empty_database))
    insp = inspect(engine)
    for table in metadata.sorted_tables:
        assert {c["name"] for c in insp.get_columns(table.name)} == set(table.columns.keys()), table.name
        assert {i.name for i in table.indexes} <= {i["name"] for i in insp.get_indexes(table.name)}, table.name
    engine.dispose()


def test_ledger_rejects_update_delete_truncate(migrated_database):
    from citestream.store import Ledger, LedgerEntry
    from citestream.store.db import make_engine

    ledger = Ledger(make_engine(migrated_database))
    entry = LedgerEntry("r-1", "generate", "ab" * 32, "extractive-v1", "p", "idx-1",
                        datetime(2026, 1, 1, tzinfo=UTC), {"q": "x"})
    assert ledger.append(entry) is True
    assert ledger.append(entry) is False  # once per (request_id, stage, prompt_sha256)
    with psycopg.connect(migrated_database, autocommit=True) as conn:
        for sql in ("UPDATE audit_ledger SET model = 'other'", "DELETE FROM audit_ledger",
                    "TRUNCATE audit_ledger"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                conn.execute(sql)
        assert conn.execute("SELECT count(*) FROM audit_ledger").fetchone()[0] == 1
    assert ledger.verify().ok


def test_ledger_verify_names_a_tampered_row(migrated_database):
    from citestream.store import Ledger, LedgerEntry
    from citestream.store.db import make_engine

    ledger = Ledger(make_engine(migrated_database))
    for i in range(3):
        ledger.append(LedgerEntry(f"r-{i}", "generate", f"{i:064x}", "m", "p", "idx-1",
                                  datetime(2026, 1, 1, tzinfo=UTC), {"i": i}))
    with psycopg.connect(migrated_database, autocommit=True) as conn:  # the owner can disable the trigger
        conn.execute("ALTER TABLE audit_ledger DISABLE TRIGGER audit_ledger_no_update_delete")
        conn.execute("UPDATE audit_ledger SET model = 'forged' WHERE request_id = 'r-1'")
        tampered_id = conn.execute("SELECT id FROM audit_ledger WHERE request_id = 'r-1'").fetchone()[0]
        conn.execute("ALTER TABLE audit_ledger ENABLE TRIGGER audit_ledger_no_update_delete")
    report = ledger.verify()
    assert not report.ok and report.first_broken_id == tampered_id


def _entry(request_id: str):
    from citestream.store import LedgerEntry

    return LedgerEntry(request_id, "generate", "cd" * 32, "m", "p", "idx-1", datetime(2026, 1, 1, tzinfo=UTC), {})


def test_the_database_refuses_a_second_successor_of_a_ledger_row(migrated_database):
    from citestream.store import Ledger
    from citestream.store.db import make_engine
    from citestream.store.ledger import GENESIS_HASH, row_hash

    ledger = Ledger(make_engine(migrated_database))
    assert ledger.append(_entry("r-1"))
    fork = _entry("r-fork")  # linked to the genesis, which row r-1 already follows
    with psycopg.connect(migrated_database, autocommit=True) as conn, \
            pytest.raises(psycopg.errors.UniqueViolation, match="audit_ledger_one_successor"):
        conn.execute(
            "INSERT INTO audit_ledger (request_id, stage, prompt_sha256, model, policy_version, index_version, "
            "created_at, payload, prev_hash, row_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, '{}', %s, %s)",
            (fork.request_id, fork.stage, fork.prompt_sha256, fork.model, fork.policy_version,
             fork.index_version, fork.created_at, GENESIS_HASH, row_hash(GENESIS_HASH, fork)))


def test_writers_in_several_processes_and_threads_extend_one_chain(migrated_database):
    """Each ``Ledger`` stands for a worker process: it links to the head it last saw, which another writer's appends
    make stale; the append learns the head from its own statement, and concurrent links race on the unique
    prev_hash, so no row is lost and the chain never forks."""
    from concurrent.futures import ThreadPoolExecutor

    from citestream.store import Ledger
    from citestream.store.db import make_engine

    writers = [Ledger(make_engine(migrated_database)) for _ in range(3)]
    jobs = [(writers[i % 3], f"r-{i}") for i in range(60)]
    with ThreadPoolExecutor(6) as pool:
        assert all(pool.map(lambda job: job[0].append(_entry(job[1])), jobs))
    assert not any(writers[0].append(_entry(f"r-{i}")) for i in range(0, 60, 7))  # once per prompt, stale head or not
    report = writers[1].verify()
    assert report.ok and report.rows == 60
