"""An index on chunks.parent_id: the parent lexical list finds each parent's children by it
(``store.search.lexical_parents``), and without the index that lookup was a sequential scan of every chunk — 67 ms
a question at 100x the corpus, the largest cost that grew with it (docs/retrieval.md, issue 16).

Revision ID: 0008
Revises: 0007
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("chunks_parent_id_idx", "chunks", ["parent_id"])


def downgrade() -> None:
    op.drop_index("chunks_parent_id_idx", table_name="chunks")
