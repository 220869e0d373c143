"""Standard Operating Procedures on real first pages (issue 55): a body named on a line of its own ("World Health
Organization", "EUROPEAN COMMISSION", "MHRA") issued the document even when it is titled "Standard Operating
Procedure"; a firm's own SOP is SOPS, uploaded too, and a question in scope SOPS about it is answered. An operator
corrects any document's issuer from the command line, and the change is kept in the document's history."""

import shutil
import uuid

import pytest

from citestream.cli.main import main as cli
from citestream.ingest.correct import HISTORY_KEY, CannotCorrect, correct_issuer
from citestream.ingest.pipeline import from_pdf
from citestream.ingest.runner import ingest_paths
from citestream.models import QuestionEvent
from citestream.store import ChunkStore, engine_for

from tests.support.common import new_request_id
from tests.support.ingest import write_cover_pdf

SOP_BODY = [
    "1. Purpose. This procedure describes how shared manufacturing equipment is cleaned and released.",
    "2. Scope. It applies to every vessel, filler and transfer line in the Building 4 suites.",
    "3. Cleaning. After each batch, operators rinse the vessel with purified water at 70 degrees Celsius.",
    "4. Acceptance. Swab samples must show less than 10 micrograms of residue per swab.",
    "5. The procedure follows the Food and Drug Administration guidance on cleaning validation for drug products.",
]
WHO_SOP = ["World Health Organization", "Standard Operating Procedure", "Temperature mapping of storage areas",
           "Technical supplement to WHO Technical Report Series, No. 961"]
EC_SOP = ["EUROPEAN COMMISSION", "Standard Operating Procedure", "Handling of GMP non-compliance statements",
          "Brussels, 2021"]
MHRA_SOP = ["MHRA", "Standard Operating Procedure", "Handling of GMP inspection reports", "Version 3, 2020"]
COMPANY_SOP = ["Acme Biologics Ltd", "Standard Operating Procedure SOP-QA-017",
               "Cleaning of shared manufacturing equipment", "Electronic records (21 CFR Part 11)",
               "Effective date: 1 March 2025"]


@pytest.mark.parametrize("cover, issuer, scope", [
    (WHO_SOP, "WHO", "MIXED"), (EC_SOP, "European Commission", "EMA"), (MHRA_SOP, "MHRA", "MIXED"),
    (COMPANY_SOP, "SOPS", "SOPS"),
], ids=["who", "european-commission", "mhra", "company"])
def test_a_named_body_beats_the_words_standard_operating_procedure(tmp_path, cover, issuer, scope):
    doc = from_pdf(write_cover_pdf(tmp_path / "procedure.pdf", cover, SOP_BODY))
    assert (doc.issuer, doc.authority, doc.authority_source) == (issuer, scope, "first-page")


def _upload(settings, cover) -> tuple:
    folder = settings.uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    return folder, write_cover_pdf(folder / "procedure.pdf", cover, SOP_BODY)


def test_an_uploaded_company_sop_is_searched_in_sops_and_a_who_sop_stays_mixed(settings):
    for cover, expected in ((COMPANY_SOP, ("SOPS", "SOPS")), (WHO_SOP, ("WHO", "MIXED"))):
        folder, path = _upload(settings, cover)
        try:
            doc = from_pdf(path, roots=[settings.uploads_dir])
            assert doc.origin == "upload" and (doc.issuer, doc.authority) == expected
        finally:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture()
def sop_database(settings, migrated_database, embedder):
    """A database of the test's own holding one uploaded company SOP (and nothing in SOPS before it)."""
    folder, path = _upload(settings, COMPANY_SOP)
    try:
        engine = engine_for(migrated_database)
        summary = ingest_paths([path], ChunkStore(engine), embedder)
        assert not summary.errors, [f.error for f in summary.errors]
        yield settings.model_copy(update={"database_url": migrated_database}), engine, path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_question_in_scope_sops_about_the_uploaded_sop_is_answered(sop_database):
    from citestream.deps import Deps
    from citestream.inprocess import answer_inprocess

    settings, engine, _ = sop_database
    with engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("SELECT issuer, authority FROM documents")).all() == [("SOPS", "SOPS")]
    question = "At what temperature do operators rinse the vessel after each batch?"
    answer = answer_inprocess(QuestionEvent(request_id=new_request_id("sop"), question=question, scope="SOPS"),
                              Deps(settings))
    assert answer.status == "answered", (answer.refusal_code, answer.explanation, answer.failure_reason)
    assert any("70 degrees" in s.text for s in answer.sentences)


def test_an_operator_corrects_an_issuer_from_the_command_line_and_it_is_kept(sop_database, embedder, monkeypatch,
                                                                              capsys):
    settings, engine, path = sop_database
    store = ChunkStore(engine)
    [doc_id] = _doc_ids(engine)
    monkeypatch.setenv("CITESTREAM_DATABASE_URL", settings.database_url)
    from citestream.config import get_settings

    get_settings.cache_clear()
    try:
        assert cli(["documents", "set-issuer", doc_id, "WHO", "--reason", "a WHO template"]) == 0
        assert "SOPS (SOPS) -> WHO (MIXED)" in capsys.readouterr().out
        authority, issuer, metadata = store.labels(doc_id)
        assert (issuer, authority, metadata["_issuer"]["source"]) == ("WHO", "MIXED", "operator")
        [entry] = metadata[HISTORY_KEY]
        assert (entry["was_issuer"], entry["issuer"], entry["reason"]) == ("SOPS", "WHO", "a WHO template")
        assert entry["by"].startswith("operator") and entry["at"]
        assert cli(["documents", "history", doc_id]) == 0 and "SOPS (SOPS) -> WHO (MIXED)" in capsys.readouterr().out
        # the same bytes ingested again: the document is read as SOPS again, but the operator's word stays
        summary = ingest_paths([path], store, embedder)
        assert not summary.errors
        assert store.labels(doc_id)[:2] == ("MIXED", "WHO")
        with pytest.raises(CannotCorrect):
            correct_issuer(store, doc_id, "Ministry of Magic")
        assert cli(["documents", "set-issuer", "no-such-doc", "FDA"]) == 1
    finally:
        get_settings.cache_clear()


def _doc_ids(engine) -> list[str]:
    from sqlalchemy import text

    with engine.connect() as conn:
        return [r[0] for r in conn.execute(text("SELECT doc_id FROM documents"))]
