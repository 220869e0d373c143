"""BM25's corpus figures kept by the database (migration 0006): equal to the chunks, ranking as the scan did."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from citestream.ingest import from_text, ingest_document
from citestream.store import ChunkSearch, ChunkStore, engine_for

from tests.support.retrieval import DOCUMENTS, ingest_documents

COUNTED = {
    "chunk_stats": "SELECT kind, authority, count(*), sum(length(tsv)) FROM chunks GROUP BY 1, 2",
    "lexeme_stats": "SELECT kind, authority, lexeme, count(*) FROM chunks, unnest(tsvector_to_array(tsv)) lexeme "
                    "GROUP BY 1, 2, 3",
}
KEPT = {"chunk_stats": "SELECT kind, authority, n, total_length FROM chunk_stats",
        "lexeme_stats": "SELECT kind, authority, lexeme, df FROM lexeme_stats"}


@pytest.fixture()
def engine(migrated_database, embedder):
    engine = engine_for(migrated_database)
    ingest_documents(engine, embedder)
    yield engine
    engine.dispose()


def _assert_stats_match_chunks(engine) -> None:
    with engine.connect() as conn:
        for table, counted in COUNTED.items():
            assert set(conn.execute(text(KEPT[table])).all()) == set(conn.execute(text(counted)).all()), table


def test_stats_follow_ingest_replace_and_delete(engine, embedder):
    _assert_stats_match_chunks(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM lexeme_stats")).scalar_one() > 100

    store = ChunkStore(engine)
    ingest_document(from_text("lot-release-codes", "Each lot carries the release code ZZ9 from the quality unit.",
                              title="lot-release-codes", authority="EMA"), store, embedder)  # replaced, new authority
    _assert_stats_match_chunks(engine)

    with engine.begin() as conn:
        conn.execute(text("DELETE FROM documents WHERE doc_id = 'annual-product-review'"))  # cascades to chunks
    _assert_stats_match_chunks(engine)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM lexeme_stats WHERE lexeme = 'apr'")).scalar_one() == 0


@pytest.mark.parametrize("ranker", ["bm25", "bm25_memory"])
@pytest.mark.parametrize("scope", ["MIXED", "FDA", ("ICH", "EMA")])
def test_bm25_ranks_exactly_as_counting_the_corpus(engine, scope, ranker):
    """From the kept statistics, or from the worker's in-memory copy: the scores of the per-query count."""
    search = ChunkSearch(engine)
    queries = [text.split(".")[0] for _, text in DOCUMENTS.values()] + ["the quality unit of the lot", "the the"]
    for query in queries:
        for kind in ("child", "parent"):
            kept = search._lexical(kind, query, scope, 10, ranker, 1.2, 0.75)
            scanned = search._lexical(kind, query, scope, 10, "bm25_scan", 1.2, 0.75)
            # same chunks, same scores (exact copies may swap places: their sums differ in the last bit)
            assert {r.chunk_id: r.score for r in kept} == pytest.approx({r.chunk_id: r.score for r in scanned},
                                                                      rel=1e-12), (query, kind)


def test_the_in_memory_copy_follows_a_new_index_version(engine, embedder):
    """An update reads the documents written since the last one, drops the removed ones, keeps the rest: after
    each, the same lists as the count over the corpus."""
    search = ChunkSearch(engine)

    def same_as_counting(query: str) -> list[str]:
        found = search.lexical(query, "MIXED", 5, "bm25_memory")
        assert [(r.chunk_id, pytest.approx(r.score, rel=1e-12)) for r in found] == \
            [(r.chunk_id, r.score) for r in search.lexical(query, "MIXED", 5, "bm25_scan")]
        return [r.chunk_id for r in found]

    assert same_as_counting("zeolite sieve") == []
    child = search._memory["child"]
    first = child.documents_read
    assert first == len(DOCUMENTS)

    store = ChunkStore(engine)
    ingest_document(from_text("sieves", "A zeolite sieve dries the solvent.", title="sieves", authority="FDA"),
                    store, embedder)
    assert same_as_counting("zeolite sieve")
    assert child.documents_read == first + 1  # the new document only

    ingest_document(from_text("sieves", "A molecular filter dries the solvent.", title="sieves", authority="FDA"),
                    store, embedder)  # replaced: its old words are gone
    assert same_as_counting("zeolite sieve") == []
    assert same_as_counting("molecular filter")
    assert child.documents_read == first + 2

    with engine.begin() as conn:
        conn.execute(text("DELETE FROM documents WHERE doc_id = 'sieves'"))
        conn.execute(text("INSERT INTO index_versions (corpus_digest, doc_count, chunk_count) VALUES ('-', 0, 0)"))
    assert same_as_counting("molecular filter") == []
    assert child.documents_read == first + 2  # a removal reads nothing


def test_the_ranker_is_a_setting_checked_when_the_worker_starts():
    from pydantic import ValidationError

    from citestream.config import Settings
    from citestream.deps import policy_from_settings

    assert policy_from_settings(Settings()).retrieval.lexical_ranker == "bm25_memory"
    assert policy_from_settings(Settings(lexical_ranker="bm25")).retrieval.lexical_ranker == "bm25"
    with pytest.raises(ValidationError, match="lexical_ranker"):
        Settings(lexical_ranker="bm42")
