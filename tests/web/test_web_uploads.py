"""Uploads and page images through the web page, with its own worker, Postgres and broker (all real): an upload is
a document of its own and never replaces another root's; a hostile or oversized upload ends with its reason and
leaves nothing on disk while the page and the worker stay up; a huge page is shown within the pixel cap."""

from __future__ import annotations

import io
import time
import uuid

import httpx
import pytest
from PIL import Image
from sqlalchemy import text

from citestream.config import get_settings
from citestream.models import QuestionEvent
from citestream.store import make_engine

from tests.support.common import CORPUS, new_request_id
from tests.support.ingest import write_inflating_pdf, write_text_pdf
from tests.support.web import UPLOAD_MAX_MB, ask_via_kafka, ingest_pdfs, write_pdf

pytestmark = pytest.mark.e2e

CORPUS_PDF = CORPUS / "CMC_Stability_Testing_Drug_Products.pdf"  # the corpus' smallest: five pages


def _upload(http: httpx.Client, name: str, content) -> httpx.Response:
    return http.post("/api/documents", content=content, headers={"x-filename": name,
                                                                 "content-type": "application/pdf"})


def _envelope(http: httpx.Client, request_id: str, timeout_s: float = 240) -> dict:
    """The ingest envelope the page has seen for an upload's request."""
    deadline = time.monotonic() + timeout_s
    while (response := http.get(f"/api/ingests/{request_id}")).status_code == 404:
        assert time.monotonic() < deadline, f"no envelope for {request_id} after {timeout_s:.0f} s"
        time.sleep(1)
    return response.json()["data"]


def _document(database_url: str, doc_id: str) -> tuple:
    """What a document says: its authority and origin, and every chunk's id, text and authority."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            document = conn.execute(text("SELECT authority, origin, content_sha256 FROM documents "
                                         "WHERE doc_id = :d"), {"d": doc_id}).one()
            rows = conn.execute(text("SELECT chunk_id, text, authority FROM chunks WHERE doc_id = :d ORDER BY seq"),
                                {"d": doc_id}).all()
        return tuple(document), [tuple(r) for r in rows]
    finally:
        engine.dispose()


def _files(folder) -> set:
    return {p for p in folder.rglob("*")} if folder.exists() else set()


@pytest.mark.skipif(not CORPUS_PDF.exists(), reason="../shared/corpus is not present")
def test_an_upload_named_like_a_corpus_document_is_a_new_document_and_the_corpus_one_is_untouched(
        http, web_stack, embedder, tmp_path):
    ingest_pdfs(web_stack.database_url, [CORPUS_PDF], embedder)  # from the corpus root, as `citestream ingest`
    doc_id = CORPUS_PDF.stem
    before = _document(web_stack.database_url, doc_id)
    assert before[0][:2] == ("FDA", "root:corpus") and len(before[1]) >= 5

    impostor = write_pdf(tmp_path / CORPUS_PDF.name, "Stability Testing of Drug Products",
                         "Food and Drug Administration guidance: stability testing of drug products is never needed.")
    sent = _upload(http, CORPUS_PDF.name, impostor.read_bytes())
    assert sent.status_code == 202, sent.text
    envelope = _envelope(http, sent.json()["request_id"])
    assert envelope["status"] == "ok" and envelope["outputs"]["errors"] == []
    assert envelope["outputs"]["docIds"] == [f"upload:{doc_id}"]
    assert {k: envelope["outputs"]["documents"][0][k] for k in ("authority", "origin")} == {
        "authority": "MIXED", "origin": "upload"}

    assert _document(web_stack.database_url, doc_id) == before  # same chunks, same texts, same authority
    listed = {d["doc_id"]: d for d in http.get("/api/documents").json()["documents"]}
    assert (listed[doc_id]["origin"], listed[doc_id]["authority"]) == ("root:corpus", "FDA")
    assert (listed[f"upload:{doc_id}"]["origin"], listed[f"upload:{doc_id}"]["authority"]) == ("upload", "MIXED")
    assert listed[f"upload:{doc_id}"]["pdf"] == CORPUS_PDF.name  # its own name, under its own id and origin


def test_a_hostile_or_oversized_upload_ends_with_its_reason_and_leaves_nothing_on_disk(http, web_stack, tmp_path):
    uploads = get_settings().uploads_dir  # the page's, on this machine's state folder
    before = _files(uploads)

    bomb = write_inflating_pdf(tmp_path / "bomb.pdf")  # 187 kB, under the page's 1 MB cap; 96 MB inflated
    sent = _upload(http, "bomb.pdf", bomb.read_bytes())
    assert sent.status_code == 202, sent.text
    outputs = _envelope(http, sent.json()["request_id"])["outputs"]
    assert outputs["ingestedCount"] == 0 and "CITESTREAM_PDF_MEMORY_MB" in outputs["errors"][0]["reason"]

    big = b"%PDF-1.4\n" + b"0" * (UPLOAD_MAX_MB << 20)
    declared = _upload(http, "declared.pdf", big)  # refused by its Content-Length before a byte is read
    streamed = _upload(http, "streamed.pdf", (big[i:i + 65536] for i in range(0, len(big), 65536)))  # chunked
    for refused in (declared, streamed):
        assert refused.status_code == 413 and "1 MB limit" in refused.json()["error"]

    assert _files(uploads) == before  # the bomb deleted by the worker once it failed; the others never kept
    assert web_stack.worker.proc.poll() is None and http.get("/healthz").json()["ok"]
    question = QuestionEvent(request_id=new_request_id("after-bomb"), question="What does lecanemab target?")
    assert ask_via_kafka(web_stack.settings, [question])[question.request_id].validation_status == "PASSED"


def test_a_huge_page_is_shown_within_the_pixel_cap(http, web_stack, embedder, tmp_path, monkeypatch):
    """A 6,000-pt page (ingested by an operator who raised the page cap) at scale 2 would be 12,000 px a side:
    the page renders it at 4,000, in its limited child, and keeps serving."""
    huge = write_text_pdf(tmp_path / f"Huge_Page_{uuid.uuid4().hex[:8]}.pdf", size=(6000, 6000))
    monkeypatch.setenv("CITESTREAM_PDF_MAX_PAGE_PT", "20000")
    get_settings.cache_clear()
    try:
        ingest_pdfs(web_stack.database_url, [huge], embedder)
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
    image = http.get(f"/api/pages/{huge.stem}/1.png")
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(image.content)).size == (4000, 4000)
    cited = http.get(f"/api/chunks/{huge.stem}-chunk-0").json()
    assert cited["unavailable"] is None and cited["boxes"]
    assert http.get("/healthz").json()["ok"]


def test_an_uploads_issuer_is_shown_and_only_its_uploader_corrects_it(http, web_stack, tmp_path):
    """The issuer read from an upload's first page is shown; the secret its upload was answered with lets whoever
    uploaded it correct it (through documents.ingest, nothing embedded again), and nobody else."""
    from tests.support.ingest import COVERS, prose, write_cover_pdf

    name = f"gdp-{uuid.uuid4().hex[:8]}.pdf"
    pdf = write_cover_pdf(tmp_path / name, COVERS["WHO"][1], prose("storage temperature", 12))
    sent = _upload(http, name, pdf.read_bytes())
    assert sent.status_code == 202, sent.text
    doc_id, token = sent.json()["doc_id"], sent.json()["owner_token"]
    read = _envelope(http, sent.json()["request_id"])["outputs"]["documents"][0]
    assert (read["docId"], read["issuer"], read["authority"], read["authoritySource"]) == (
        doc_id, "WHO", "MIXED", "first-page")
    listed = {d["doc_id"]: d for d in http.get("/api/documents").json()["documents"]}
    assert (listed[doc_id]["issuer"], listed[doc_id]["issuer_source"]) == ("WHO", "first-page")
    assert "PIC/S" in http.get("/api/issuers").json()["issuers"]

    def correct(issuer: str, secret: str, target: str = doc_id) -> httpx.Response:
        return http.post("/api/documents/issuer", json={"doc_id": target, "issuer": issuer, "owner_token": secret})

    assert correct("PIC/S", "not-the-secret").status_code == 403
    assert correct("Nobody", token).status_code == 422
    fixed = correct("pics", token)
    assert fixed.status_code == 202, fixed.text
    after = _envelope(http, fixed.json()["request_id"])["outputs"]["documents"][0]
    assert (after["issuer"], after["authority"], after["authoritySource"], after["changed"]) == (
        "PIC/S", "MIXED", "uploader", True)
    listed = {d["doc_id"]: d for d in http.get("/api/documents").json()["documents"]}
    assert (listed[doc_id]["issuer"], listed[doc_id]["issuer_source"], listed[doc_id]["authority"]) == (
        "PIC/S", "uploader", "MIXED")
    with make_engine(web_stack.database_url).connect() as conn:  # relabelled in place: the chunks carry it too
        assert set(conn.execute(text("SELECT DISTINCT issuer FROM chunks WHERE doc_id = :d"), {"d": doc_id})
                   .scalars()) == {"PIC/S"}
