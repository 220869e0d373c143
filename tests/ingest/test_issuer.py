"""The issuer read from a document (issue 47): its first pages, then its metadata, then its file name; the
operator's manifest and command line over what was read; uploads read but kept MIXED; bad input answered."""

import json

import pytest

from citestream.core.regulators import scope_of
from citestream.ingest.issuer import read_issuer
from citestream.ingest.pipeline import from_pdf
from citestream.ingest.runner import ingest_paths
from citestream.store import ChunkStore

from tests.support.ingest import (
    COVERS, prose, write_blank_pdf, write_cover_pdf, write_image_only_pdf,
)

BODY = prose("batch release", 12)


@pytest.mark.parametrize("issuer", sorted(COVERS))
def test_a_first_page_of_every_issuer_is_read_as_that_issuer(tmp_path, issuer):
    scope, cover = COVERS[issuer]
    doc = from_pdf(write_cover_pdf(tmp_path / "document.pdf", cover, BODY))
    assert (doc.issuer, doc.authority, doc.authority_source) == (issuer, scope, "first-page")
    assert doc.decision is not None and doc.decision.evidence and not doc.decision.warnings()
    assert scope_of(issuer) == scope


def test_an_ich_guideline_republished_under_a_regulators_cover_stays_ichs(tmp_path):
    cover = ["Q9 Quality Risk Management", "Guidance for Industry", "U.S. Department of Health and Human Services",
             "Food and Drug Administration", "June 2006", "ICH"]
    doc = from_pdf(write_cover_pdf(tmp_path / "document.pdf", cover, BODY))
    assert (doc.issuer, doc.authority, doc.decision.warnings()) == ("ICH", "ICH", [])


def test_metadata_then_file_name_when_the_pages_name_no_issuer(tmp_path):
    plain = ["Water for injection", "Questions and answers"]
    by_author = from_pdf(write_cover_pdf(tmp_path / "notes.pdf", plain, BODY, author="European Medicines Agency"))
    assert (by_author.issuer, by_author.authority_source, by_author.decision.evidence) == (
        "EMA", "metadata", "European Medicines Agency")
    by_name = from_pdf(write_cover_pdf(tmp_path / "pi-011-3-pics-computerised-systems.pdf", plain, BODY))
    assert (by_name.issuer, by_name.authority, by_name.authority_source) == ("PIC/S", "MIXED", "file-name")
    unknown = from_pdf(write_cover_pdf(tmp_path / "minutes.pdf", ["Minutes of the garden club"], BODY))
    assert (unknown.issuer, unknown.authority, unknown.authority_source) == ("", "MIXED", "unknown")
    assert unknown.decision.warnings() == ["issuer unknown: stored as MIXED (searchable in MIXED scope)"]


def test_the_manifest_and_the_command_line_override_what_was_read(tmp_path):
    path = write_cover_pdf(tmp_path / "who.pdf", COVERS["WHO"][1], BODY)
    (tmp_path / "manifest.json").write_text(json.dumps([{"file": "who.pdf", "issuer": "pics"}]))
    listed = from_pdf(path)
    assert (listed.issuer, listed.authority, listed.authority_source) == ("PIC/S", "MIXED", "manifest")
    assert listed.decision.read.issuer == "WHO"  # what the document says is kept, and the disagreement reported
    assert "differs from the document's own (WHO" in listed.decision.warnings()[0]
    (tmp_path / "manifest.json").write_text(json.dumps([{"file": "who.pdf", "authority": "EMA"}]))
    assert (from_pdf(path).issuer, from_pdf(path).authority) == ("EMA", "EMA")  # an authority names its issuer
    assert from_pdf(path, use_manifest=False).issuer == "WHO"
    given = from_pdf(path, issuer="MHRA")
    assert (given.issuer, given.authority, given.authority_source) == ("MHRA", "MIXED", "given")
    scoped = from_pdf(write_cover_pdf(tmp_path / "ec.pdf", COVERS["European Commission"][1], BODY), authority="EMA")
    assert (scoped.issuer, scoped.authority) == ("European Commission", "EMA")  # the read issuer of that scope


def test_an_uploads_issuer_is_read_or_corrected_by_its_uploader_and_its_scope_stays_mixed(settings):
    import shutil
    import uuid

    folder = settings.uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    try:
        path = write_cover_pdf(folder / "fda.pdf", COVERS["FDA"][1], BODY)
        read = from_pdf(path, roots=[settings.uploads_dir])
        assert (read.origin, read.issuer, read.authority, read.authority_source) == (
            "upload", "FDA", "MIXED", "first-page")
        corrected = from_pdf(path, roots=[settings.uploads_dir], claimed="FDA", claimed_issuer="MHRA")
        assert (corrected.issuer, corrected.authority, corrected.authority_source) == ("MHRA", "MIXED", "uploader")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_an_acronym_names_the_issuer_on_a_cover_line_not_in_prose():
    """A cover whose only issuer's name is an acronym (the full name is in a logo) is read; a text that mentions a
    regulator in its prose ("received FDA accelerated approval") is not that regulator's document."""
    cover = read_issuer(["MHRA GXP Data Integrity Guidance and Definitions\nRevision 1: March 2018"], {}, "x.pdf")
    assert (cover.issuer, cover.source) == ("MHRA", "first-page")
    prose_only = ("Lecanemab in Early Alzheimer's\nLecanemab, an anti-amyloid-beta antibody, showed a 27% reduction "
                  "in cognitive decline over 18 months in the CLARITY-AD trial and received FDA accelerated approval.")
    assert read_issuer([prose_only], {}, "lecanemab.pdf").issuer == ""
    assert read_issuer([prose_only], {"Author": "FDA/CDER"}, "lecanemab.pdf").source == "metadata"


def test_two_issuers_on_one_cover_take_the_first_and_name_both():
    joint = ["U.S. Food and Drug Administration", "European Medicines Agency",
             "Joint question-and-answer document on parallel scientific advice"]
    reading = read_issuer(["\n".join(joint)], {}, "joint.pdf")
    assert (reading.issuer, reading.also) == ("FDA", ("EMA",))


def test_bad_input_gets_a_clear_answer_and_nothing_else_is_lost(tmp_path, engine, embedder, capsys):
    """A PDF with no text, a scanned image and a PDF that names two issuers, beside a good one, through the
    command line: the two without text are errors that say why, the two-issuer one is ingested with the issuer
    taken and both named, and the good one is ingested."""
    from citestream.cli import main

    folder = tmp_path / "inbox"
    folder.mkdir()
    write_blank_pdf(folder / "blank.pdf")
    write_image_only_pdf(folder / "scanned.pdf")
    joint = ["U.S. Food and Drug Administration", "European Medicines Agency",
             "Joint question-and-answer document on parallel scientific advice"]
    write_cover_pdf(folder / "joint.pdf", joint, prose("parallel advice", 12))
    write_cover_pdf(folder / "who.pdf", COVERS["WHO"][1], prose("storage conditions", 12))
    assert main(["ingest", str(folder)]) == 1  # errors exit non-zero
    out = capsys.readouterr().out
    for name in ("blank.pdf", "scanned.pdf"):
        assert f"{name}: ERROR {name}: no extractable text (empty, or image-only without a text layer)" in out
    assert "joint.pdf: names FDA and EMA as its issuer; took FDA, named first" in out
    assert "who.pdf: " in out and "issuer WHO (first page: 'World Health Organization'), scope MIXED" in out
    assert "to correct one, name it in manifest.json beside the PDF" in out
    summary = ingest_paths([folder], ChunkStore(engine), embedder)
    assert {f.path.name: f.state for f in summary.files} == {
        "blank.pdf": "error", "joint.pdf": "unchanged", "scanned.pdf": "error", "who.pdf": "unchanged"}
