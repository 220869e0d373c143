"""Lexical statistics kept by the database: BM25 reads N, average length and document frequencies from them.

Before this, every lexical query counted and averaged every chunk of its kind and counted each query term's
documents from the matches (policy-qa-design-notes §2; issue 16). ``chunk_stats`` holds, per kind and
authority, how many chunks there are and their summed length (lexemes in the tsvector); ``lexeme_stats``
holds, per kind, authority and lexeme, how many chunks contain it. Statement triggers on ``chunks``
update both inside the writing transaction (ingest's replace-document, a cascade from ``documents``), so
readers see figures that match the chunks they can see, whatever path wrote them.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

# ``sign`` is +1 for the new rows and -1 for the old; ORDER BY keeps concurrent writers from deadlocking.
_APPLY = """
    INSERT INTO chunk_stats AS s (kind, authority, n, total_length)
    SELECT kind, authority, {sign} * count(*), {sign} * sum(length(tsv)) FROM {rows}
    GROUP BY kind, authority ORDER BY kind, authority
    ON CONFLICT (kind, authority) DO UPDATE SET n = s.n + excluded.n, total_length = s.total_length + excluded.total_length;
    INSERT INTO lexeme_stats AS s (kind, authority, lexeme, df)
    SELECT kind, authority, lexeme, {sign} * count(*) FROM {rows}, unnest(tsvector_to_array(tsv)) AS lexeme
    GROUP BY kind, authority, lexeme ORDER BY kind, authority, lexeme
    ON CONFLICT (kind, authority, lexeme) DO UPDATE SET df = s.df + excluded.df;
"""

_FUNCTION = f"""
CREATE FUNCTION chunks_lexical_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        {_APPLY.format(sign=-1, rows="old_rows")}
        DELETE FROM lexeme_stats WHERE df <= 0;
        DELETE FROM chunk_stats WHERE n <= 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        {_APPLY.format(sign=1, rows="new_rows")}
    END IF;
    RETURN NULL;
END $$
"""


def upgrade() -> None:
    op.create_table(
        "chunk_stats",
        sa.Column("kind", sa.Text, primary_key=True),
        sa.Column("authority", sa.Text, primary_key=True),
        sa.Column("n", sa.BigInteger, nullable=False),
        sa.Column("total_length", sa.BigInteger, nullable=False, comment="sum of length(tsv)"),
    )
    op.create_table(
        "lexeme_stats",
        sa.Column("kind", sa.Text, primary_key=True),
        sa.Column("authority", sa.Text, primary_key=True),
        sa.Column("lexeme", sa.Text, primary_key=True),
        sa.Column("df", sa.BigInteger, nullable=False, comment="chunks whose tsv holds the lexeme"),
    )
    op.execute(_FUNCTION)
    op.execute("CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks REFERENCING NEW TABLE AS new_rows "
               "FOR EACH STATEMENT EXECUTE FUNCTION chunks_lexical_stats()")
    op.execute("CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks REFERENCING OLD TABLE AS old_rows "
               "FOR EACH STATEMENT EXECUTE FUNCTION chunks_lexical_stats()")
    op.execute("CREATE TRIGGER chunks_stats_update AFTER UPDATE ON chunks "
               "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
               "FOR EACH STATEMENT EXECUTE FUNCTION chunks_lexical_stats()")
    op.execute(_APPLY.format(sign=1, rows="chunks"))  # what is already ingested


def downgrade() -> None:
    for name in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER chunks_stats_{name} ON chunks")
    op.execute("DROP FUNCTION chunks_lexical_stats()")
    op.drop_table("lexeme_stats")
    op.drop_table("chunk_stats")
