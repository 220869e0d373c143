"""Each ledger row has at most one successor: a unique ``prev_hash``. The database itself refuses a fork of the
chain, whoever writes, so an append no longer serialises on an advisory lock: it links to the head it knows and
the insert fails when another writer linked to that head first (``store.ledger``, issue 16).

Revision ID: 0009
Revises: 0008
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_unique_constraint("audit_ledger_one_successor", "audit_ledger", ["prev_hash"])


def downgrade() -> None:
    op.drop_constraint("audit_ledger_one_successor", "audit_ledger", type_="unique")
