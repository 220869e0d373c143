"""The application role cannot rewrite the audit ledger: the database refuses it, not just the code.

The append-only triggers reject UPDATE/DELETE/TRUNCATE for every role (tests/store/test_migrations.py);
here the worker's own role ``citestream_app`` (migration 0004) lacks the privileges in the first place,
while it can still append — and ``citestream ledger verify`` stays happy with what it appended.
"""

from __future__ import annotations

from datetime import datetime, UTC


import psycopg
import pytest

from tests.support.common import as_app_role


def test_app_role_appends_but_cannot_update_delete_or_truncate_the_ledger(database):
    from citestream.store import Ledger, LedgerEntry
    from citestream.store.db import make_engine

    app_url = as_app_role(database)
    engine = make_engine(app_url)
    ledger = Ledger(engine)
    entry = LedgerEntry(f"role-{datetime.now().timestamp()}", "generate", "cd" * 32, "extractive", "p", "idx",
                        datetime(2026, 1, 1, tzinfo=UTC), {"q": "role test"})
    assert ledger.append(entry) is True
    with psycopg.connect(app_url, autocommit=True) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == "citestream_app"
        for sql in ("UPDATE audit_ledger SET model = 'forged'", "DELETE FROM audit_ledger",
                    "TRUNCATE audit_ledger", "ALTER TABLE audit_ledger DISABLE TRIGGER audit_ledger_no_update_delete"):
            with pytest.raises((psycopg.errors.InsufficientPrivilege, psycopg.errors.UndefinedObject)):
                conn.execute(sql)
        # the rest of the schema is usable by the worker
        conn.execute("INSERT INTO requests (request_id, state) VALUES (%s, 'received') ON CONFLICT DO NOTHING",
                     (entry.request_id,))
        conn.execute("UPDATE requests SET state = 'answered' WHERE request_id = %s", (entry.request_id,))
    assert ledger.verify().ok
    engine.dispose()
