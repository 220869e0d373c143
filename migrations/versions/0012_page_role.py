"""The web page's own role, ``citestream_page``: it reads documents, chunks, index versions, requests, the ledger
and provenance, and may change nothing (issue 48: as ``citestream_app`` the page could UPDATE and DELETE
documents, chunks and requests). A table added later is not the page's until a migration grants it.

Revision ID: 0012
Revises: 0011
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

PAGE_ROLE = "citestream_page"
READS = "documents, chunks, index_versions, requests, audit_ledger, provenance"


def upgrade() -> None:
    op.execute(f"""
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{PAGE_ROLE}') THEN
                CREATE ROLE {PAGE_ROLE} LOGIN;
            END IF;
        END $$;
    """)
    op.execute(f"GRANT USAGE ON SCHEMA public TO {PAGE_ROLE}")
    op.execute(f"GRANT SELECT ON {READS} TO {PAGE_ROLE}")


def downgrade() -> None:
    op.execute(f"REVOKE ALL ON {READS} FROM {PAGE_ROLE}")
    op.execute(f"REVOKE USAGE ON SCHEMA public FROM {PAGE_ROLE}")
