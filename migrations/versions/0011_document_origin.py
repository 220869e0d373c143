"""Every document has an owner, its origin: the ingest root it came from (``root:<folder name>``), the web page's
uploads (``upload``), a record's inline text (``inline``) or a file given to the command line outside every root
(``cli``). Ingest replaces a document only with one of the same origin (``store.chunks.may_replace``, issue 41).

Rows from before this revision: inline text (``inline``) when their source names no PDF file, else ``''`` (from a
file, root not recorded), which the next ingest of that id from a file claims.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("origin", sa.Text(), nullable=False, server_default="",
                                         comment="The root a document came from; only that root replaces it"))
    op.execute("UPDATE documents SET origin = 'inline' WHERE lower(source) NOT LIKE '%.pdf'")


def downgrade() -> None:
    op.drop_column("documents", "origin")
