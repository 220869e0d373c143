"""On real PDFs (issue 47): the corpus and the training documents ingested with no manifest into a database of their
own get their issuers from what they say (the two manifests are the expected answers), and a question that names a
regulator whose documents are indexed is answered from them, never refused WRONG_AUTHORITY."""

import json

import pytest
from sqlalchemy import text

from citestream.core.policy import Policy
from citestream.ingest.runner import ingest_paths
from citestream.models import QuestionEvent
from citestream.qa.retrieve.facts import find_facts
from citestream.store import ChunkSearch, ChunkStore, engine_for

from tests.support.common import CORPUS, TRAINING_DOCS, migrate, new_request_id

pytestmark = pytest.mark.slow

FOLDERS = {CORPUS: "authority", TRAINING_DOCS: "issuer"}  # each manifest's key for the expected issuer


@pytest.fixture(scope="module")
def real_docs(settings, embedder):
    """``<test database>_issuers``, kept between runs (unchanged PDFs are skipped): both folders, no manifest."""
    from citestream import infra

    if not all(f.is_dir() for f in FOLDERS):
        pytest.skip("../shared/corpus or ../shared/training-docs is not present")
    base = settings.database_url.rsplit("/", 1)
    name = f"{base[1]}_issuers"
    if settings.infra != "docker":
        infra.servers(settings)[0].ensure_database(name)
    dsn = settings.resolve_dsn(f"{base[0]}/{name}")
    migrate(dsn)
    engine = engine_for(dsn)
    summary = ingest_paths(list(FOLDERS), ChunkStore(engine), embedder, use_manifest=False)
    assert not summary.errors, [f.error for f in summary.errors]
    return engine


def _expected() -> dict[str, str]:
    return {row["file"]: row[key] for folder, key in FOLDERS.items()
            for row in json.loads((folder / "manifest.json").read_text())}


def test_at_least_95_percent_of_the_real_pdfs_get_the_issuer_their_manifest_gives(real_docs):
    with real_docs.connect() as conn:
        stored = dict(conn.execute(text("SELECT pdf, issuer FROM documents")).all())
        sources = dict(conn.execute(text("SELECT pdf, metadata->'_issuer'->>'source' FROM documents")).all())
    expected = _expected()
    assert set(expected) <= set(stored)
    wrong = {pdf: (stored[pdf], issuer) for pdf, issuer in expected.items() if stored[pdf] != issuer}
    assert len(wrong) <= 0.05 * len(expected), wrong
    assert all(sources[pdf] not in ("manifest", "given") for pdf in expected)  # read, not told
    assert {stored[pdf] for pdf in expected} >= {"FDA", "ICH", "EMA", "SOPS", "PIC/S", "WHO"}


WHO_GDP = "trs957-annex5-who-good-distribution-practices-for-pharmaceutical-products.pdf"
PICS_GDP = "pi-044-1-pics-gdp-aide-memoire.pdf"
EMA_IMP = ("guideline-requirements-chemical-and-pharmaceutical-quality-documentation-concerning-investigational-"
           "medicinal-products-clinical-trials-revision-2_en.pdf")


@pytest.mark.parametrize("question, scope, pdf", [
    ("What does the WHO say storage areas for pharmaceutical products should be sufficient for?", "MIXED", WHO_GDP),
    ("According to the WHO, how should storage areas for pharmaceutical products be sized?", "FDA", WHO_GDP),
    ("Which medicines does the PIC/S GDP aide-memoire say a company may handle?", "MIXED", PICS_GDP),
    ("Under EU guidelines, what purity should be stated for radiopharmaceutical substances in investigational "
     "medicinal products?", "MIXED", EMA_IMP),
])
def test_a_question_naming_an_indexed_regulator_is_answered_from_its_documents(real_docs, embedder, relevance,
                                                                               question, scope, pdf):
    search = ChunkSearch(real_docs)
    event = QuestionEvent(request_id=new_request_id("issuer"), question=question, scope=scope)
    record = find_facts(event, search, ChunkStore(real_docs).index_version(), embedder, Policy(), relevance)
    assert record.no_answer is None or record.no_answer.code != "WRONG_AUTHORITY", record.no_answer
    assert record.facts and {f.pdf for f in record.facts} == {pdf}
    assert record.relevance is not None and record.relevance.scope_inferred


def test_a_regulator_with_no_documents_indexed_is_still_refused_with_that_reason(real_docs, embedder, relevance):
    search = ChunkSearch(real_docs)
    event = QuestionEvent(request_id=new_request_id("issuer"), question="How does the MHRA grade GMP deficiencies?")
    record = find_facts(event, search, ChunkStore(real_docs).index_version(), embedder, Policy(), relevance)
    assert record.no_answer is not None and record.no_answer.code == "WRONG_AUTHORITY"
    assert record.no_answer.detail == "the question asks about MHRA, whose documents are not in the index"
