"""Initial schema: documents, chunks (pgvector HNSW + full-text GIN), index versions, audit ledger, requests.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    op.create_table(
        "documents",
        sa.Column("doc_id", sa.Text, primary_key=True),
        sa.Column("pdf", sa.Text, nullable=False),
        sa.Column("title", sa.Text, nullable=False, server_default=""),
        sa.Column("source", sa.Text, nullable=False, server_default=""),
        sa.Column("authority", sa.Text, nullable=False, server_default="MIXED"),
        sa.Column("content_sha256", sa.Text, nullable=False),
        sa.Column("pages", sa.Integer, nullable=False),
        sa.Column("chunk_count", sa.Integer, nullable=False),
        sa.Column("metadata", JSONB, nullable=False, server_default="{}"),
        sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_table(
        "chunks",
        sa.Column("chunk_id", sa.Text, primary_key=True),
        sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("parent_id", sa.Text, nullable=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("pdf", sa.Text, nullable=False),
        sa.Column("page", sa.Integer, nullable=False),
        sa.Column("section", sa.Text, nullable=True),
        sa.Column("authority", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("embedding", Vector(384), nullable=True),
        sa.Column("tsv", TSVECTOR, sa.Computed("to_tsvector('english', text)", persisted=True)),
        sa.CheckConstraint("kind IN ('child', 'parent')", name="chunks_kind_check"),
        sa.CheckConstraint("page >= 1", name="chunks_page_check"),
    )
    op.create_index("chunks_doc_id_idx", "chunks", ["doc_id"])
    op.create_index("chunks_authority_kind_idx", "chunks", ["authority", "kind"])
    op.execute(
        "CREATE INDEX chunks_embedding_hnsw_idx ON chunks USING hnsw (embedding vector_cosine_ops) "
        "WITH (m = 16, ef_construction = 64)"
    )
    op.create_index("chunks_tsv_gin_idx", "chunks", ["tsv"], postgresql_using="gin")

    op.create_table(
        "index_versions",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("corpus_digest", sa.Text, nullable=False),
        sa.Column("doc_count", sa.Integer, nullable=False),
        sa.Column("chunk_count", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )

    op.create_table(
        "audit_ledger",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("request_id", sa.Text, nullable=False),
        sa.Column("stage", sa.Text, nullable=False),
        sa.Column("prompt_sha256", sa.Text, nullable=False),
        sa.Column("model", sa.Text, nullable=False),
        sa.Column("policy_version", sa.Text, nullable=False),
        sa.Column("index_version", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column("prev_hash", sa.Text, nullable=False),
        sa.Column("row_hash", sa.Text, nullable=False, unique=True),
        sa.UniqueConstraint("request_id", "stage", "prompt_sha256", name="audit_ledger_once_per_prompt"),
    )
    op.execute(
        """
        CREATE FUNCTION audit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'audit_ledger is append-only: % rejected', TG_OP
                USING ERRCODE = 'insufficient_privilege';
        END $$;
        """
    )
    op.execute(
        "CREATE TRIGGER audit_ledger_no_update_delete BEFORE UPDATE OR DELETE ON audit_ledger "
        "FOR EACH ROW EXECUTE FUNCTION audit_ledger_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_ledger_no_truncate BEFORE TRUNCATE ON audit_ledger "
        "FOR EACH STATEMENT EXECUTE FUNCTION audit_ledger_append_only()"
    )

    op.create_table(
        "requests",
        sa.Column("request_id", sa.Text, primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("question", sa.Text, nullable=True),
        sa.Column("scope", sa.Text, nullable=True),
        sa.Column("outcome", sa.Text, nullable=True),
        sa.Column("detail", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    op.create_index("requests_state_idx", "requests", ["state"])


def downgrade() -> None:
    op.drop_table("requests")
    op.execute("DROP TABLE audit_ledger")
    op.execute("DROP FUNCTION audit_ledger_append_only()")
    op.drop_table("index_versions")
    op.drop_table("chunks")
    op.drop_table("documents")
