"""Issue 54, M1: a regulator without a contract scope (the MHRA, WHO, ...) is searched by its documents' issuer, and
only the operator's documents count as that regulator's. An upload's issuer (read from its first page, or its
uploader's correction) and an inline document's are labels: a question naming that regulator is never searched in
them, on the real Postgres, by every lexical ranker and the dense list alike."""

from __future__ import annotations

import shutil
import uuid

import pytest

from citestream.core.policy import Policy
from citestream.ingest import from_pdf, from_text, ingest_document
from citestream.models import QuestionEvent
from citestream.qa.retrieve import find_facts
from citestream.store import ChunkSearch, ChunkStore, engine_for
from citestream.store.scopes import Among
from citestream.store.search import LEXICAL_RANKERS

from tests.support.common import new_request_id
from tests.support.ingest import write_cover_pdf

MHRA_COVER = ["Medicines and Healthcare products Regulatory Agency", "Guidance",
              "Rinsing of shared manufacturing vessels", "Version 2, 2024"]
FIRM_COVER = ["Acme Biologics Ltd", "Rinsing of shared manufacturing vessels", "Version 2, 2024"]
BODY = ["After each batch, operators rinse the vessel with purified water at 70 degrees Celsius.",
        "Swab samples must show less than 10 micrograms of residue per swab before the vessel is released."]
MHRA_QUESTION = "What does the MHRA require for rinsing a vessel after each batch?"
WHO_QUESTION = "What does the WHO require for rinsing a vessel after each batch?"


@pytest.fixture()
def engine(settings, migrated_database, embedder):
    """A database of the test's own holding two uploads that speak for a regulator without a scope: one whose first
    page names the MHRA, one whose uploader claimed WHO; and an inline document labelled MHRA."""
    folder = settings.uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    engine = engine_for(migrated_database)
    store = ChunkStore(engine)
    try:
        read = from_pdf(write_cover_pdf(folder / "mhra-rinsing.pdf", MHRA_COVER, BODY), roots=[settings.uploads_dir])
        claimed = from_pdf(write_cover_pdf(folder / "who-rinsing.pdf", FIRM_COVER, BODY),
                           roots=[settings.uploads_dir], claimed_issuer="WHO")
        assert [(d.origin, d.issuer, d.authority) for d in (read, claimed)] == [("upload", "MHRA", "MIXED"),
                                                                               ("upload", "WHO", "MIXED")]
        for doc in (read, claimed):
            ingest_document(doc, store, embedder)
        ingest_document(from_text("inline-rinsing", " ".join(BODY), title="inline-rinsing"), store, embedder)
        store.relabel("inline-rinsing", "MIXED", "MHRA", {})
        yield engine
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        engine.dispose()


def _ask(engine, embedder, question: str):
    event = QuestionEvent(request_id=new_request_id("m1"), question=question)
    return find_facts(event, ChunkSearch(engine), ChunkStore(engine).index_version(), embedder, Policy())


def _doc_of(engine) -> dict[str, str]:
    from sqlalchemy import text

    with engine.connect() as conn:
        return dict(conn.execute(text("SELECT chunk_id, doc_id FROM chunks")).all())


def test_an_uploads_or_inline_documents_issuer_is_no_regulators_documents(engine, embedder):
    search = ChunkSearch(engine)
    assert search.issuers() & {"MHRA", "WHO"} == set()
    labels = {doc: ChunkStore(engine).labels(doc)[:2] for doc in set(_doc_of(engine).values())}
    assert labels == {"upload:mhra-rinsing": ("MIXED", "MHRA"), "upload:who-rinsing": ("MIXED", "WHO"),
                      "inline-rinsing": ("MIXED", "MHRA")}  # each still shown with the issuer it claims
    assert search.authorities() == {"MIXED"}  # the authorities are all documents', as before
    for question, named in ((MHRA_QUESTION, "MHRA"), (WHO_QUESTION, "WHO")):
        record = _ask(engine, embedder, question)
        assert not record.facts
        assert record.no_answer is not None and record.no_answer.code == "WRONG_AUTHORITY"
        assert record.no_answer.detail == f"the question asks about {named}, whose documents are not in the index"


def test_with_an_operator_document_of_the_issuer_the_uploads_are_not_searched(engine, embedder, tmp_path):
    root = tmp_path / "guidance"
    root.mkdir()
    operator = from_pdf(write_cover_pdf(root / "mhra-vessels.pdf", MHRA_COVER, BODY), roots=[root])
    assert (operator.origin, operator.issuer) == ("root:guidance", "MHRA")
    ingest_document(operator, ChunkStore(engine), embedder)
    search, doc_of = ChunkSearch(engine), _doc_of(engine)
    assert "MHRA" in search.issuers()

    among, query = Among((), ("MHRA",)), "rinse the vessel with purified water after each batch"
    found = {"dense": search.dense(embedder.embed_one(query), among, k=50)}
    for ranker in LEXICAL_RANKERS:
        found[ranker] = search.lexical(query, among, k=50, ranker=ranker)
        found[f"{ranker} parents"] = search.lexical_parents(query, embedder.embed_one(query), among, 50, ranker)
    for name, ranked in found.items():
        assert ranked and {doc_of[r.chunk_id] for r in ranked} == {operator.doc_id}, name
    assert found["bm25_memory"] == found["bm25_scan"]  # the in-memory copy scores the scope as the SQL counts it

    record = _ask(engine, embedder, MHRA_QUESTION)
    assert record.no_answer is None and record.facts
    assert {f.pdf for f in record.facts} == {"mhra-vessels.pdf"}
