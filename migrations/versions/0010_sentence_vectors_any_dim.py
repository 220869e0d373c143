"""Sentence vectors of any dimension: the relevance embedder is configurable (``CITESTREAM_RELEVANCE_EMBEDDER``), and
a larger base such as all-mpnet-base-v2 gives 768-d vectors where MiniLM-L6 gives 384. The rows are keyed by the
embedder that computed them, so vectors of several embedders live side by side; none is searched by an index
(the blend reads them by key), so the column needs no fixed dimension. Retrieval's chunk vectors keep theirs.

Revision ID: 0010
Revises: 0009
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE sentence_vectors ALTER COLUMN embedding TYPE vector")


def downgrade() -> None:
    op.execute("DELETE FROM sentence_vectors WHERE vector_dims(embedding) <> 384")  # a 384-d column keeps only those
    op.execute("ALTER TABLE sentence_vectors ALTER COLUMN embedding TYPE vector(384)")
