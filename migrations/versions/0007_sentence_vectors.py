"""Sentence vectors kept by ingest: the relevance model's blend reads a corpus sentence's embedding instead of
computing it at question time (issue 16; a fresh worker spent a fifth of its time embedding corpus sentences).

Keyed by the embedding model's name and the SHA-256 of the unit's text: a cache ingest fills and no document
owns. Existing documents get theirs at their next ingest (the ingest pipeline's version changed with this).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sentence_vectors",
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("text_sha256", sa.Text, nullable=False),
        sa.Column("embedding", Vector(384), nullable=False),
        sa.PrimaryKeyConstraint("model", "text_sha256", name="sentence_vectors_pkey"),
    )


def downgrade() -> None:
    op.drop_table("sentence_vectors")
