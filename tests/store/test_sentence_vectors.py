"""Sentence vectors kept by ingest (migration 0007): what the relevance model's blend would embed at question time
is read from Postgres instead, with the same scores."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from citestream.embedding import get_relevance_embedder
from citestream.ingest import from_text, ingest_document
from citestream.relevance import RelevanceModel
from citestream.store import ChunkStore, SentenceVectors, engine_for
from citestream.core.text_units import scored_units

DOC = ("The applicant must submit the stability protocol within 30 days of the request. "
       "Each batch record is kept for at least one year after the expiry date of the batch. "
       "Deviations found during the review are reported to the quality unit without delay.")
QUESTION = "How long is a batch record kept?"


@pytest.fixture()
def engine(migrated_database, embedder):
    engine = engine_for(migrated_database)
    ingest_document(from_text("record-keeping", DOC, title="record-keeping"), ChunkStore(engine), embedder)
    yield engine
    engine.dispose()


def _units(engine) -> list[str]:
    with engine.connect() as conn:
        texts = conn.execute(text("SELECT text FROM chunks WHERE kind = 'child' ORDER BY seq")).scalars().all()
    return [u for t in texts for u in scored_units(t)]


def test_ingest_keeps_the_vector_of_every_sentence_the_model_scores(engine, embedder):
    units = _units(engine)
    stored = SentenceVectors(engine).fetch([*units, "a sentence no document holds"])
    assert set(stored) == set(units) and len(units) >= 3
    assert np.allclose(np.stack([stored[u] for u in units]), get_relevance_embedder().embed(units), atol=1e-5)
    ingest_document(from_text("record-keeping-copy", DOC, title="copy"), ChunkStore(engine), embedder)
    with engine.connect() as conn:  # the same sentences in another document: kept once
        assert conn.execute(text("SELECT count(*) FROM sentence_vectors")).scalar_one() == len(set(units))


def test_the_model_reads_stored_vectors_instead_of_embedding_and_scores_the_same(engine, monkeypatch):
    units = _units(engine)
    expected = RelevanceModel("").score(QUESTION, units)
    model = RelevanceModel("")
    model.read_stored_vectors(SentenceVectors(engine).fetch)
    embedded: list[str] = []
    real = model._embedder.embed
    monkeypatch.setattr(model._embedder, "embed", lambda texts, **kw: embedded.extend(texts) or real(texts, **kw))
    assert np.allclose(model.score(QUESTION, units), expected, atol=1e-5)
    assert embedded == [QUESTION]  # only the question: every corpus sentence came from Postgres


def test_an_unreadable_store_is_a_miss_not_an_error(engine, caplog):
    units = _units(engine)
    model = RelevanceModel("")

    def broken(texts):
        raise ConnectionError("database gone")

    model.read_stored_vectors(broken)
    assert np.allclose(model.score(QUESTION, units), RelevanceModel("").score(QUESTION, units), atol=1e-6)
    assert "stored sentence vectors unavailable" in caplog.text


def test_vectors_of_another_embedder_and_dimension_live_beside_the_shipped_ones(engine, monkeypatch):
    """Migration 0010: a 768-d embedder (all-mpnet-base-v2's size) keeps its rows under its own key; each embedder
    reads only its own, and the shipped 384-d rows are untouched."""
    from citestream.store import sentence_vectors

    units = _units(engine)
    shipped = SentenceVectors(engine).fetch(units)
    wide = {u: np.full(768, 1 / np.sqrt(768), dtype=np.float32) for u in units}
    monkeypatch.setattr(sentence_vectors, "relevance_embedder_name", lambda: "a-768-d-embedder@0123456789ab")
    with engine.begin() as conn:
        sentence_vectors.keep(conn, wide)
    fetched = SentenceVectors(engine).fetch(units)
    assert set(fetched) == set(units) and all(v.shape == (768,) and np.allclose(v, wide[u]) for u, v in fetched.items())
    monkeypatch.undo()
    again = SentenceVectors(engine).fetch(units)
    assert all(again[u].shape == (384,) and np.array_equal(again[u], shipped[u]) for u in units)
