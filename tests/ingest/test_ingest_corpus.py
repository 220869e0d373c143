"""On real corpus PDFs: every spot-checked chunk sits on the page it claims; a re-ingest gives the same ids."""

import random

import pytest
from sqlalchemy import text

from citestream.ingest.pdf import page_texts
from citestream.ingest.runner import ingest_paths
from citestream.store import ChunkStore

from tests.support.common import CORPUS
from tests.support.ingest import page_overlap

pytestmark = pytest.mark.slow

# Three small documents of different make (a CPG, a Part 11 guidance with margin line numbers, an ANDA guidance).
FILES = ["CMC_Stability_Testing_Drug_Products.pdf", "CMC_Process_Validation_CPG.pdf", "21CFR-Part-11.pdf"]


@pytest.fixture(scope="module")
def corpus_store(engine, embedder):
    if not all((CORPUS / f).exists() for f in FILES):
        pytest.skip(f"corpus not found at {CORPUS}")
    store = ChunkStore(engine)
    _forget(engine)
    summary = ingest_paths([CORPUS / f for f in FILES], store, embedder)
    assert not summary.errors
    return store


def _forget(engine) -> None:
    """Drop these documents so a run really parses and embeds them (chunks cascade)."""
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM documents WHERE pdf = ANY(:files)"), {"files": FILES})


def _chunks(engine, kind: str = "child") -> list[dict]:
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(text(
            "SELECT chunk_id, doc_id, pdf, page, section, authority, parent_id, text FROM chunks "
            "WHERE pdf = ANY(:files) AND kind = :kind ORDER BY doc_id, seq"), {"files": FILES, "kind": kind})]


def test_ten_random_chunks_are_on_the_page_they_claim(corpus_store, engine):
    chunks = _chunks(engine)
    pages = {f: page_texts(CORPUS / f) for f in FILES}
    for chunk in random.Random(20261122).sample(chunks, 10):
        overlap = page_overlap(chunk["text"], pages[chunk["pdf"]])
        best = max(overlap)
        assert best >= 0.9, (chunk["chunk_id"], overlap)
        assert overlap[chunk["page"] - 1] == best, (chunk["chunk_id"], chunk["page"], overlap)


def test_every_chunk_carries_its_provenance(corpus_store, engine):
    children = _chunks(engine)
    parents = {p["chunk_id"] for p in _chunks(engine, "parent")}
    assert {c["authority"] for c in children} == {"FDA"}  # from manifest.json
    assert all(c["parent_id"] in parents for c in children)
    assert all(c["chunk_id"] == f"{c['doc_id']}-chunk-{i}"
               for doc in FILES for i, c in enumerate(x for x in children if x["pdf"] == doc))
    part11 = " ".join(" ".join(c["text"].split()) for c in children if c["pdf"] == "21CFR-Part-11.pdf")
    # lines 7 and 8 of page 4, read without the margin line number between them
    assert "current thinking on this topic. It does not create or confer any rights" in part11
    assert "I. INTRODUCTION This guidance is intended" in part11  # a heading, its numbers gone
    assert not any("Contains Nonbinding Recommendations" in c["text"] for c in children)


def test_ingesting_twice_gives_the_same_ids_and_counts(corpus_store, engine, embedder):
    first = _chunks(engine) + _chunks(engine, "parent")
    _forget(engine)
    summary = ingest_paths([CORPUS / f for f in FILES], corpus_store, embedder)
    assert summary.count("ingested") == len(FILES)
    second = _chunks(engine) + _chunks(engine, "parent")
    assert [(c["chunk_id"], c["page"], c["text"]) for c in second] == [
        (c["chunk_id"], c["page"], c["text"]) for c in first]
    again = ingest_paths([CORPUS / f for f in FILES], corpus_store, embedder)
    assert again.count("unchanged") == len(FILES) and _chunks(engine) == _chunks(engine)
