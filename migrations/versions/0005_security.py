"""Security: a question's fingerprint on requests (DUPLICATE_REQUEST_ID) and an insert-only provenance table.

``provenance`` holds what a stage emitted for a request (the assemble stage's
evidence digest), written before the record is published, so the validate stage
can refuse a generation no assemble stage produced. The application role may
read and append to it, never change it.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

APP_ROLE = "citestream_app"


def upgrade() -> None:
    op.add_column("requests", sa.Column("fingerprint", sa.Text, nullable=True,
                                        comment="SHA-256 of the question's text, scope and top_k"))
    op.create_table(
        "provenance",
        sa.Column("request_id", sa.Text, nullable=False),
        sa.Column("stage", sa.Text, nullable=False),
        sa.Column("sha256", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("request_id", "stage", "sha256", name="provenance_pkey"),
    )
    # 0004's default privileges gave the new table SELECT, INSERT, UPDATE, DELETE: keep only the first two
    op.execute(f"REVOKE ALL ON provenance FROM {APP_ROLE}")
    op.execute(f"GRANT SELECT, INSERT ON provenance TO {APP_ROLE}")


def downgrade() -> None:
    op.drop_table("provenance")
    op.drop_column("requests", "fingerprint")
