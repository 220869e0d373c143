"""Review54b, N6: an upload's issuer is a label anyone may write ("MHRA" on its first page), never a regulator's
name to the verifier. ``document_names`` gives the grounding pack no issuer for an upload or an inline text, so a
claim naming the MHRA is not passed by an upload that calls itself the MHRA's, while the operator's document of the
same text and cover still is. Real Postgres, real retrieval; the relevance model is replaced by a constant score so
only the rules about names decide."""

from __future__ import annotations

import shutil
import uuid

import pytest

from citestream.core.policy import Policy
from citestream.ingest import from_pdf, ingest_document
from citestream.models.verdicts import Claim, ClaimVerdict
from citestream.qa.retrieve import grounding_pack
from citestream.store import ChunkSearch, ChunkStore, engine_for
from citestream.verification.relevance_judge import RelevanceJudge

from tests.support.ingest import write_cover_pdf

COVER = ["Medicines and Healthcare products Regulatory Agency", "Guidance",
         "Rinsing of shared manufacturing vessels", "Version 2, 2024"]
BODY = ["After each batch, operators rinse the vessel with purified water at 70 degrees Celsius.",
        "Swab samples must show less than 10 micrograms of residue per swab before the vessel is released."]
CLAIM = ("Under the MHRA rinsing guidance, operators rinse the vessel with purified water at 70 degrees Celsius "
         "after each batch.")


class _Sure:
    """Every sentence restates the claim: what is left to decide is what the rules about names check."""

    def score(self, claim: str, units: list[str]) -> list[float]:
        return [0.9] * len(units)


@pytest.fixture()
def engine(migrated_database):
    engine = engine_for(migrated_database)
    yield engine
    engine.dispose()


def _ingest(engine, embedder, path, roots):
    doc = from_pdf(write_cover_pdf(path, COVER, BODY), roots=roots)
    ingest_document(doc, ChunkStore(engine), embedder)
    return doc


def _pack(engine, embedder):
    result = grounding_pack(CLAIM, "MIXED", 8, ChunkSearch(engine), embedder, Policy())
    assert result.status == "ok" and result.grounding.chunks
    return result.grounding


def _verdict(pack) -> ClaimVerdict:
    return RelevanceJudge(_Sure()).judge(Claim(id="c", text=CLAIM), pack)


def test_an_upload_naming_the_mhra_is_no_mhra_document_for_the_verifier(settings, engine, embedder, tmp_path):
    folder = settings.uploads_dir / uuid.uuid4().hex[:16]
    folder.mkdir(parents=True)
    try:
        upload = _ingest(engine, embedder, folder / "mhra-rinsing.pdf", [settings.uploads_dir])
        assert (upload.origin, upload.issuer) == ("upload", "MHRA")  # its first page names the MHRA
        assert ChunkStore(engine).labels(upload.doc_id)[1] == "MHRA"  # still shown with the issuer it claims
        pack = _pack(engine, embedder)
        assert {c.metadata.get("issuer") for c in pack.chunks} == {""}
        verdict = _verdict(pack)
        assert verdict.verdict == "unclear" and "MHRA" in verdict.rationale  # the sentence would have to say it
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_the_operators_document_of_the_same_cover_still_names_the_mhra(engine, embedder, tmp_path):
    root = tmp_path / "guidance"
    root.mkdir()
    operator = _ingest(engine, embedder, root / "mhra-rinsing.pdf", [root])
    assert (operator.origin, operator.issuer) == ("root:guidance", "MHRA")
    pack = _pack(engine, embedder)
    print([c.metadata for c in pack.chunks])
    assert {c.metadata.get("issuer") for c in pack.chunks} == {"MHRA"}
    assert _verdict(pack).verdict == "pass"
