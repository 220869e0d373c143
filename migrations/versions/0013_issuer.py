"""Every document and chunk carries its issuer (issue 47): the regulator the document says issued it, a gazetteer name
(``core.regulators``) or '' when unknown. The contract's scope enum stays in ``authority``; a question that names a
regulator without a scope of its own (the MHRA, WHO, PIC/S, ...) is searched by ``issuer``.

Rows from before this revision: the issuer of a scoped authority is that authority ('FDA', 'EMA', 'ICH', 'SOPS');
MIXED rows stay unknown until their next ingest reads them.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("issuer", sa.Text(), nullable=False, server_default="",
                                         comment="Who issued it (core.regulators); '' when unknown"))
    op.add_column("chunks", sa.Column("issuer", sa.Text(), nullable=False, server_default=""))
    op.execute("UPDATE documents SET issuer = authority WHERE authority <> 'MIXED'")
    op.execute("UPDATE chunks SET issuer = authority WHERE authority <> 'MIXED'")
    op.create_index("chunks_issuer_kind_idx", "chunks", ["issuer", "kind"])


def downgrade() -> None:
    op.drop_index("chunks_issuer_kind_idx", table_name="chunks")
    op.drop_column("chunks", "issuer")
    op.drop_column("documents", "issuer")
