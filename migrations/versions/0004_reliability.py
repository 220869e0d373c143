"""Reliability: per-state timestamps and re-drive count on requests; an application role that cannot rewrite the ledger.

Revision ID: 0004
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = None

APP_ROLE = "citestream_app"


def upgrade() -> None:
    op.add_column("requests", sa.Column("history", JSONB, nullable=False, server_default="{}",
                                        comment="state -> first time it was reached"))
    op.add_column("requests", sa.Column("redrives", sa.Integer, nullable=False, server_default="0"))
    # The role the worker can run as: it appends to the ledger but may not UPDATE/DELETE/TRUNCATE it
    # (the append-only triggers reject those for everyone, the owner included).
    op.execute(f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                CREATE ROLE {APP_ROLE} LOGIN;
            END IF;
        END $$;
    """)
    op.execute(f"GRANT USAGE ON SCHEMA public TO {APP_ROLE}")
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON documents, chunks, index_versions, requests TO {APP_ROLE}")
    op.execute(f"GRANT SELECT, INSERT ON audit_ledger TO {APP_ROLE}")
    op.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}")
    # tables of later migrations: usable by the app; the ledger's restriction above stays as it is
    op.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {APP_ROLE}")
    op.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {APP_ROLE}")


def downgrade() -> None:
    op.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM {APP_ROLE}")
    op.execute(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM {APP_ROLE}")
    op.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {APP_ROLE}")
    op.execute(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {APP_ROLE}")
    op.execute(f"REVOKE USAGE ON SCHEMA public FROM {APP_ROLE}")
    op.drop_column("requests", "redrives")
    op.drop_column("requests", "history")
