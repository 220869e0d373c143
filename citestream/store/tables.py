"""SQLAlchemy 2 table definitions: the single description of the schema the queries use.

Migrations (``migrations/versions``) create exactly these; a test compares them.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger, CheckConstraint, Column, Computed, DateTime, ForeignKey, Index, Integer, MetaData,
    PrimaryKeyConstraint, Table, Text, UniqueConstraint, func,
)
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR

EMBEDDING_DIM = 384

metadata = MetaData()

documents = Table(
    "documents", metadata,
    Column("doc_id", Text, primary_key=True),
    Column("pdf", Text, nullable=False, comment="File name users see in citations"),
    Column("title", Text, nullable=False, server_default=""),
    Column("source", Text, nullable=False, server_default=""),
    Column("authority", Text, nullable=False, server_default="MIXED"),
    Column("content_sha256", Text, nullable=False),
    Column("pages", Integer, nullable=False),
    Column("chunk_count", Integer, nullable=False),
    Column("metadata", JSONB, nullable=False, server_default="{}"),
    Column("ingested_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("origin", Text, nullable=False, server_default="",
           comment="The root a document came from; only that root replaces it (store.chunks.may_replace)"),
    Column("issuer", Text, nullable=False, server_default="",
           comment="Who issued it (core.regulators); '' when unknown"),
)

chunks = Table(
    "chunks", metadata,
    Column("chunk_id", Text, primary_key=True),
    Column("doc_id", Text, ForeignKey("documents.doc_id", ondelete="CASCADE"), nullable=False),
    Column("kind", Text, nullable=False, comment="child (indexed for search) or parent (context)"),
    Column("parent_id", Text, nullable=True),
    Column("seq", Integer, nullable=False),
    Column("pdf", Text, nullable=False),
    Column("page", Integer, nullable=False, comment="1-based physical page"),
    Column("section", Text, nullable=True),
    Column("authority", Text, nullable=False),
    Column("issuer", Text, nullable=False, server_default=""),
    Column("text", Text, nullable=False),
    Column("embedding", Vector(EMBEDDING_DIM), nullable=True),
    Column("tsv", TSVECTOR, Computed("to_tsvector('english', text)", persisted=True)),
    CheckConstraint("kind IN ('child', 'parent')", name="chunks_kind_check"),
    CheckConstraint("page >= 1", name="chunks_page_check"),
    Index("chunks_doc_id_idx", "doc_id"),
    Index("chunks_parent_id_idx", "parent_id"),
    Index("chunks_authority_kind_idx", "authority", "kind"),
    Index("chunks_issuer_kind_idx", "issuer", "kind"),
    Index(
        "chunks_embedding_hnsw_idx", "embedding", postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    ),
    Index("chunks_tsv_gin_idx", "tsv", postgresql_using="gin"),
)

# Written by ingest (migration 0007): the vectors of the sentence units the relevance model's blend scores, so no
# worker embeds a corpus sentence at question time. Keyed by the embedding model and the unit's text, not by chunk:
# a cache any document may fill and none owns (a replaced document leaves its old units; they are only never read).
sentence_vectors = Table(
    "sentence_vectors", metadata,
    Column("model", Text, nullable=False),
    Column("text_sha256", Text, nullable=False),
    Column("embedding", Vector(), nullable=False),  # any dimension: one relevance embedder's, by ``model`` (0010)
    PrimaryKeyConstraint("model", "text_sha256", name="sentence_vectors_pkey"),
)

# Kept by triggers on chunks (migration 0006): what BM25 needs about the whole corpus, without reading it.
chunk_stats = Table(
    "chunk_stats", metadata,
    Column("kind", Text, primary_key=True),
    Column("authority", Text, primary_key=True),
    Column("n", BigInteger, nullable=False),
    Column("total_length", BigInteger, nullable=False, comment="sum of length(tsv)"),
)

lexeme_stats = Table(
    "lexeme_stats", metadata,
    Column("kind", Text, primary_key=True),
    Column("authority", Text, primary_key=True),
    Column("lexeme", Text, primary_key=True),
    Column("df", BigInteger, nullable=False, comment="chunks whose tsv holds the lexeme"),
)

index_versions = Table(
    "index_versions", metadata,
    Column("version", Integer, primary_key=True, autoincrement=True),
    Column("corpus_digest", Text, nullable=False),
    Column("doc_count", Integer, nullable=False),
    Column("chunk_count", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)

audit_ledger = Table(
    "audit_ledger", metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=True),
    Column("request_id", Text, nullable=False),
    Column("stage", Text, nullable=False),
    Column("prompt_sha256", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("policy_version", Text, nullable=False),
    Column("index_version", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("payload", JSONB, nullable=False, comment="What replay needs: the AnswerBundle and question"),
    Column("prev_hash", Text, nullable=False),
    Column("row_hash", Text, nullable=False, unique=True),
    UniqueConstraint("request_id", "stage", "prompt_sha256", name="audit_ledger_once_per_prompt"),
    UniqueConstraint("prev_hash", name="audit_ledger_one_successor"),  # no fork of the chain (0009)
)

requests = Table(
    "requests", metadata,
    Column("request_id", Text, primary_key=True),
    Column("state", Text, nullable=False),
    Column("question", Text, nullable=True),
    Column("scope", Text, nullable=True),
    Column("outcome", Text, nullable=True, comment="answered | refused | failed"),
    Column("detail", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("history", JSONB, nullable=False, server_default="{}", comment="state -> first time it was reached"),
    Column("redrives", Integer, nullable=False, server_default="0"),
    Column("fingerprint", Text, nullable=True, comment="SHA-256 of the question's text, scope and top_k"),
    Index("requests_state_idx", "state"),
)

provenance = Table(
    "provenance", metadata,
    Column("request_id", Text, nullable=False),
    Column("stage", Text, nullable=False),
    Column("sha256", Text, nullable=False,
           comment="Digest of what the stage emitted (see citestream.qa.validate.provenance)"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("request_id", "stage", "sha256", name="provenance_pkey"),
)
