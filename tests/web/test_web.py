"""The web page's server over HTTP (a real `citestream web` process, real broker and Postgres), and its pure
helpers: what it refuses, what it never opens, and how it shows hostile bytes."""

from __future__ import annotations

import base64
import time

import httpx
import pytest

from citestream.models import DeadLetter
from citestream.web.uploads import safe_stem
from citestream.web.views import deadletter_view, printable, record_summary

from tests.support.web import UPLOAD_MAX_MB, ingest_pdfs, publish_raw, write_pdf


# --- pure helpers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, stem", [
    ("Guidance.pdf", "Guidance"),
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\system.ini.PDF", "system-ini"),
    ("..", "upload"),
    (".hidden.pdf", "hidden"),
    ("<script>alert(1)</script>.pdf", "script"),  # a slash ends a path component
    ("<img src=x onerror=alert(1)>.pdf", "img-src-x-onerror-alert-1"),
    ("a" * 300 + ".pdf", "a" * 80),
    ("", "upload"),
])
def test_upload_names_are_one_safe_component(name, stem):
    assert safe_stem(name) == stem


def test_dead_letter_original_is_shown_as_escaped_text():
    raw = b'{"q": "<img src=x onerror=alert(1)>\x00\x1b[2J\xff\xfe' + b"x" * 1000
    letter = DeadLetter(request_id="unknown-questions-0-1", stage="retrieve", source_topic="questions",
                        reason_code="DECODE_ERROR", reason="not UTF-8\u2028<b>",
                        original_value_b64=base64.b64encode(raw).decode())
    view = deadletter_view(letter)
    preview = view["original_preview"]
    assert preview.startswith('{"q": "<img src=x onerror=alert(1)>\\x00\\x1b[2J\\xff\\xfe')
    assert "more characters]" in preview and len(preview) < 500
    assert view["original_bytes"] == len(raw)
    assert view["reason"] == "not UTF-8\\u2028<b>"
    assert printable(b"line\nnext\ttab") == "line\nnext\ttab"


def test_record_summary_keeps_scalars_and_counts_containers():
    summary = record_summary({"request_id": "r", "trace": [], "question": "q" * 500, "facts": [1, 2], "ok": True,
                              "bundle": {"a": 1}, "score": 0.5})
    assert summary["question"].startswith("q" * 300) and "more characters" in summary["question"]
    assert summary["facts"] == "2 items" and summary["bundle"] == "1 field" and summary["ok"] is True
    assert "request_id" not in summary and "trace" not in summary


# --- the server -----------------------------------------------------------------------------------

@pytest.mark.e2e
def test_pages_carry_a_strict_content_security_policy(http):
    for path in ("/", "/live", "/documents", "/cite", "/request", "/static/app.js"):
        response = http.get(path)
        assert response.status_code == 200, path
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp and "frame-ancestors 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
    html = http.get("/").text
    assert "<script src=\"/static/app.js\" defer></script>" in html and "http" not in html.split("<body")[0]


@pytest.mark.e2e
def test_writes_must_come_from_the_page(http):
    ok = http.post("/api/questions", json={"question": "What does lecanemab target?", "scope": "MIXED"})
    assert ok.status_code == 202 and ok.json()["request_id"].startswith("web-")
    cross = http.post("/api/questions", json={"question": "x"}, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403
    form = http.post("/api/questions", data={"question": "x"})  # what a cross-site HTML form can send
    assert form.status_code == 415
    assert http.post("/api/questions", json={"question": "   "}).status_code == 422
    assert http.post("/api/questions", json={"question": "ok?", "scope": "MOON"}).status_code == 422
    assert http.post("/api/questions", json={"question": "a\u0000b"}).status_code == 422
    assert http.get("/healthz", headers={"host": "rebound.example"}).status_code == 400  # DNS rebinding


@pytest.mark.e2e
def test_uploads_are_checked_before_anything_is_published(http):
    assert http.post("/api/documents", content=b"%PDF-1.4").status_code == 400  # no X-Filename
    not_pdf = http.post("/api/documents", content=b"<html>", headers={"x-filename": "a.pdf"})
    assert not_pdf.status_code == 400 and "not a PDF" in not_pdf.json()["error"]
    empty = http.post("/api/documents", content=b"", headers={"x-filename": "a.pdf"})
    assert empty.status_code == 400
    big = b"%PDF-1.4\n" + b"0" * (UPLOAD_MAX_MB * (1 << 20))
    too_big = http.post("/api/documents", content=big, headers={"x-filename": "big.pdf"})
    assert too_big.status_code == 413 and "limit" in too_big.json()["error"]
    cross = http.post("/api/documents", content=b"%PDF-1.4", headers={"x-filename": "a.pdf",
                                                                      "origin": "http://evil.example"})
    assert cross.status_code == 403


@pytest.mark.e2e
def test_page_images_come_only_from_ingested_documents(http, web_stack, embedder, tmp_path):
    assert http.get("/api/pages/smoke-001/1.png").headers["content-type"] == "image/png"
    assert http.get("/api/pages/smoke-001/2.png").status_code == 404  # a one-page document
    assert http.get("/api/pages/smoke-001/0.png").status_code == 404
    for path in ("/api/pages/..%2F..%2Fetc%2Fpasswd/1.png", "/api/pages/%2Fetc%2Fpasswd/1.png",
                 "/api/pages/not-ingested/1.png"):
        assert http.get(path).status_code == 404, path
    assert http.get("/api/chunks/no-such-chunk").status_code == 404

    # a PDF that changed after it was ingested is not shown as if it were the indexed one
    pdf = write_pdf(tmp_path / "Changing_Doc.pdf", "Changing", "Sterile filtration removes bacteria from the fluid.")
    ingest_pdfs(web_stack.database_url, [pdf], embedder)
    assert http.get("/api/chunks/Changing_Doc-chunk-0").json()["unavailable"] is None
    write_pdf(pdf, "Changed", "Entirely different words now.")
    changed = http.get("/api/chunks/Changing_Doc-chunk-0").json()
    assert "changed since it was ingested" in changed["unavailable"] and "Sterile filtration" in changed["text"]
    assert http.get("/api/pages/Changing_Doc/1.png").status_code == 404
    pdf.unlink()
    assert "no longer where it was ingested" in http.get("/api/chunks/Changing_Doc-chunk-0").json()["unavailable"]
    # the browser never learns the server's paths
    assert all("source" not in d for d in http.get("/api/documents").json()["documents"])


@pytest.mark.e2e
def test_events_stream_starts_with_a_snapshot_and_carries_answers(http, web_stack):
    # records on an outcome topic that break its contract are skipped by the page, which keeps going
    publish_raw(web_stack.settings, "answers", b"garbage-1", b"<script>not json")
    publish_raw(web_stack.settings, "answers", b"garbage-2", b'{"request_id": "garbage-2", "sentences": 5}')
    rid = http.post("/api/questions", json={"question": "What does lecanemab target?"}).json()["request_id"]
    seen_snapshot, answer = False, None
    deadline = time.monotonic() + 120
    with http.stream("GET", "/api/events", timeout=httpx.Timeout(5, read=130)) as stream:
        event = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                seen_snapshot |= event == "snapshot"
                if event in ("answer", "snapshot") and f'"request_id": "{rid}"' in line[6:]:
                    answer = line
                    break
            if time.monotonic() > deadline:
                break
    assert seen_snapshot and answer is not None
    assert http.get(f"/api/answers/{rid}").json()["data"]["request_id"] == rid
    assert http.get("/api/answers/garbage-2").status_code == 404 and http.get("/healthz").json()["ok"]


@pytest.mark.e2e
def test_without_a_broker_the_page_still_serves_and_stops_on_a_signal(tmp_path):
    """The page waits for the broker in the background: it serves, refuses writes with 503, and exits on SIGTERM."""
    from tests.support.browser import WebProcess
    from tests.support.reliability import free_port

    nothing_there = free_port(29990)
    web = WebProcess(tmp_path / "web.log", free_port(28280),
                     {"CITESTREAM_BROKER_URL": f"kafka://127.0.0.1:{nothing_there}"})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"{web.url}/healthz", timeout=2).json()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, web.log_path.read_text()
                time.sleep(0.3)
        assert health["connected"] is False
        assert httpx.get(f"{web.url}/", timeout=5).status_code == 200
        refused = httpx.post(f"{web.url}/api/questions", json={"question": "What does lecanemab target?"}, timeout=10)
        assert refused.status_code == 503 and "broker" in refused.json()["error"]
    finally:
        started = time.monotonic()
        web.stop()
        assert time.monotonic() - started < 10 and web.proc.returncode is not None
