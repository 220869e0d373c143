"""The web page in a real browser: Debian's headless Chromium driven by Playwright, against a real worker and
a real `citestream web` process on the session's broker and Postgres (tests/support/web.py).

Screenshots of each view go to $CITESTREAM_SCREENSHOTS (docs/screenshots for the README) or a temporary folder.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, UTC

import pytest

from citestream.models import FallbackRateAlert, QuestionEvent
from citestream.sealing import RecordSealer

from tests.support.browser import chromium, chromium_missing
from tests.support.common import new_request_id
from tests.support.web import ask_via_kafka, publish_raw, write_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.browser,
              pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")]

ANSWERABLE = "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"
ANSWER_TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def browser():
    with chromium() as context:
        yield context


@pytest.fixture()
def page(browser, web_stack):
    """A new tab that records every request it makes and every script error it sees."""
    tab = browser.new_page()
    tab.requests, tab.errors = [], []
    tab.on("request", lambda r: tab.requests.append(r.url))
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))
    yield tab
    tab.close()


def wait_until(page, expression: str, timeout_s: float = 30) -> None:
    """Poll a JS expression (page.wait_for_function evaluates strings, which the page's CSP forbids: good)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout_s} s: {expression}")
        time.sleep(0.2)


def ask(page, base: str, question: str, scope: str = "MIXED"):
    """Type the question and send it with the keyboard, as a person would; returns its answered card."""
    page.goto(base + "/")
    page.select_option("#scope", scope)
    page.fill("#question", question)
    page.press("#question", "Enter")
    card = page.locator("#answers .card").first
    card.locator(".tags").wait_for(timeout=ANSWER_TIMEOUT_MS)
    return card


def test_ask_shows_the_answer_with_its_citations(page, web_stack):
    card = ask(page, web_stack.url, ANSWERABLE)
    assert card.locator(".badge.cls-definitive").inner_text() == "DEFINITIVE"
    assert "70%" in card.locator(".sentence").first.inner_text()
    link = card.locator(".cite-link").first
    assert link.inner_text() == "(smoke-001.pdf, p1, smoke-001-chunk-0)"
    assert link.get_attribute("href") == "/cite?chunk=smoke-001-chunk-0"
    assert card.locator("a.rid").inner_text().startswith("web-")
    page.locator("#answers details.more summary").first.click()
    assert card.locator(".trace dt").all_inner_texts() == ["retrieve", "filter", "assemble", "generate", "validate"]
    page.screenshot(path=str(web_stack.shots / "ask.png"), full_page=True)
    assert page.errors == []


def test_a_citation_opens_its_page_rendered_with_the_chunk_beside_it(page, web_stack):
    card = ask(page, web_stack.url, ANSWERABLE)
    card.locator(".cite-link").first.focus()
    page.keyboard.press("Enter")  # keyboard-usable: a citation is a real link
    page.wait_for_url("**/cite?chunk=smoke-001-chunk-0")
    page.locator("#page-figure").wait_for(state="visible", timeout=30_000)
    wait_until(page, "document.getElementById('page-image').complete && "
                     "document.getElementById('page-image').naturalWidth > 600")
    assert page.locator("#cite-title").inner_text() == "smoke-001"
    meta = page.locator("#cite-meta").inner_text()
    assert "smoke-001.pdf" in meta and "page 1 of 1" in meta and "MIXED" in meta
    assert "70%" in page.locator("#chunk-text").inner_text()
    assert page.locator("#page-frame .hl").count() >= 1, "the cited passage is highlighted on the page image"
    image = page.request.get(web_stack.url + page.locator("#page-image").get_attribute("src"))
    assert image.ok and image.headers["content-type"] == "image/png" and image.body()[:8] == b"\x89PNG\r\n\x1a\n"
    page.screenshot(path=str(web_stack.shots / "citation.png"), full_page=True)
    assert page.errors == []


def test_a_question_with_markup_is_shown_as_text(page, web_stack):
    hostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\"> What does lecanemab target?"
    card = ask(page, web_stack.url, hostile)
    assert card.locator(".question").inner_text() == hostile
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("[...document.scripts].every(s => s.src.endsWith('/static/app.js'))")
    page.reload()  # re-rendered from sessionStorage: still text
    page.locator("#answers .card .tags").first.wait_for()
    assert page.locator("#answers .card .question").first.inner_text() == hostile
    assert page.evaluate("window.__pwned") is None


def test_live_view_shows_answers_alerts_and_dead_letters_safely(page, web_stack):
    page.goto(web_stack.url + "/live")
    page.locator("#conn[data-state='ok']").wait_for()

    # an answer asked by another publisher (the CLI's client), not by the page
    question = QuestionEvent(request_id=new_request_id("cli"), question="What does lecanemab target?")
    replies = ask_via_kafka(web_stack.settings, [question])
    assert question.request_id in replies
    live_card = page.locator("#live-answers .card", has=page.locator(f"a.rid:has-text('{question.request_id}')"))
    live_card.wait_for(timeout=30_000)
    assert live_card.locator(".trace dt").count() == 5

    # a fallback-rate alert, as the alerts agent publishes it
    now = datetime.now(UTC)
    answerable = 100 + int(uuid.uuid4().int % 900)  # told apart from earlier runs' alerts still on the topic
    alert = FallbackRateAlert(request_id=f"fallback-rate-{int(now.timestamp())}", policy_version="qa-v1.1",
                              window_start=now - timedelta(minutes=5), window_end=now, answerable_count=answerable,
                              fallback_count=answerable // 4, rate=(answerable // 4) / answerable, threshold=0.15)
    sealer = RecordSealer.from_file(web_stack.settings.record_key_path)  # as the alerts agent seals it
    publish_raw(web_stack.settings, "ops.alerts", alert.request_id.encode(), sealer.payload(alert))
    page.locator("#alerts .row", has_text=f"{answerable // 4} of {answerable} answerable").wait_for(timeout=30_000)

    # a malformed record carrying markup: dead-lettered by the worker, shown escaped in the panel
    rid = f"web-bad-{uuid.uuid4().hex[:8]}"
    hostile = ('{"request_id": "' + rid + '", "question": "<img src=x onerror=window.__pwned=1>'
               '<script>window.__pwned=2</script>')
    publish_raw(web_stack.settings, "questions", rid.encode(), hostile.encode())
    letter = page.locator("#deadletters .row", has=page.locator(f"a.rid:has-text('{rid}')"))
    letter.wait_for(timeout=60_000)
    assert letter.locator(".badge.bad").inner_text() == "DECODE_ERROR"
    assert letter.locator("pre.original").inner_text() == hostile
    assert page.evaluate("window.__pwned") is None and page.locator("img[src='x']").count() == 0
    flow = dict(zip(page.locator("#flow .topic").all_inner_texts(), page.locator("#flow .count").all_inner_texts()))
    assert int(flow["answers"]) >= 1 and int(flow["qa.deadletter"]) >= 1 and int(flow["ops.alerts"]) >= 1
    page.screenshot(path=str(web_stack.shots / "live.png"), full_page=True)
    assert page.errors == []


def test_request_timeline_shows_each_stage_record_and_the_verified_ledger(page, web_stack):
    question = QuestionEvent(request_id=new_request_id("timeline"), question=ANSWERABLE)
    replies = ask_via_kafka(web_stack.settings, [question])
    assert replies[question.request_id].status == "answered"
    page.goto(web_stack.url + "/live")
    page.fill("#lookup-id", question.request_id)
    page.press("#lookup-id", "Enter")
    page.wait_for_url(f"**/request?id={question.request_id}")
    page.locator("#records .step").first.wait_for(timeout=30_000)
    topics = page.locator("#records .badge.topic").all_inner_texts()
    assert topics == ["questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "answers"]
    assert "null" not in page.locator("#records .step").first.inner_text()
    assert page.locator("#chain .badge").inner_text() == "ledger verify: ok"
    assert page.locator("#ledger .badge").inner_text() == "replay MATCH"
    state = page.locator("#state").inner_text()
    assert "answered" in state
    page.screenshot(path=str(web_stack.shots / "request.png"), full_page=True)
    assert page.errors == []


def test_documents_list_and_upload_through_documents_ingest(page, web_stack, tmp_path):
    page.goto(web_stack.url + "/documents")
    page.locator("#docs tbody tr").first.wait_for()
    assert {"smoke-001.pdf", "smoke-002.pdf", "smoke-003.pdf"} <= set(page.locator("#docs tbody tr td:first-child")
                                                                      .all_inner_texts())
    marker = uuid.uuid4().hex[:8]
    pdf = write_pdf(tmp_path / f"Uploaded guidance {marker}.pdf", "Uploaded guidance",
                    f"Cleaning validation marker {marker} sets residue limits for shared equipment.")
    page.set_input_files("#upload-file", str(pdf))
    page.click("#upload-form button[type=submit]")
    envelope = page.locator("#uploads .row .envelope").first
    envelope.wait_for(timeout=180_000)
    assert envelope.locator(".badge").first.inner_text() == "ok"
    assert f"Uploaded-guidance-{marker}" in envelope.inner_text()
    page.locator("#docs tbody td", has_text=f"Uploaded-guidance-{marker}.pdf").wait_for(timeout=10_000)
    assert f"upload:Uploaded-guidance-{marker}" in envelope.inner_text() and "from upload" in envelope.inner_text()
    origins = dict(zip(page.locator("#docs tbody tr td:nth-child(1)").all_inner_texts(),
                       page.locator("#docs tbody tr td:nth-child(2)").all_inner_texts()))
    assert origins[f"Uploaded-guidance-{marker}.pdf"] == "upload"  # where each document came from
    assert origins["smoke-001.pdf"] == "cli"  # the stack ingests the demo PDFs as the command line would

    # who issued it, as read; this browser uploaded it, so it may correct it (issue 47)
    row = page.locator("#docs tbody tr", has_text=f"Uploaded-guidance-{marker}.pdf")
    assert row.locator(".issuer").inner_text() == "FDA" and "file name" in row.inner_text()  # "...guidance..."
    assert page.locator("#docs tbody tr", has_text="smoke-001.pdf").locator("form.issuer-fix").count() == 0
    row.locator("form.issuer-fix select").select_option("WHO")
    row.locator("form.issuer-fix button").click()
    page.locator("#docs tbody tr", has_text=f"Uploaded-guidance-{marker}.pdf").locator(
        ".issuer", has_text="WHO").wait_for(timeout=180_000)
    assert "uploader" in page.locator("#docs tbody tr", has_text=f"Uploaded-guidance-{marker}.pdf").inner_text()

    not_pdf = tmp_path / "notes.pdf"
    not_pdf.write_text("<script>alert(1)</script> not a pdf")
    page.set_input_files("#upload-file", str(not_pdf))
    page.click("#upload-form button[type=submit]")
    refused = page.locator("#uploads .row .error").first
    refused.wait_for()
    assert "not a PDF" in refused.inner_text()
    page.screenshot(path=str(web_stack.shots / "documents.png"), full_page=True)
    assert page.errors == []


def test_phone_layout_and_nothing_loaded_from_another_origin(browser, web_stack):
    tab = browser.new_page()
    tab.set_viewport_size({"width": 390, "height": 844})
    urls: list[str] = []
    tab.on("request", lambda r: urls.append(r.url))
    try:
        response = tab.goto(web_stack.url + "/")
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
        card = ask(tab, web_stack.url, ANSWERABLE)
        assert card.is_visible()
        tab.screenshot(path=str(web_stack.shots / "phone-ask.png"), full_page=True)
        for path in ("/", "/live", "/documents", "/cite?chunk=smoke-001-chunk-0"):
            tab.goto(web_stack.url + path)
            tab.wait_for_load_state("networkidle") if path != "/live" else tab.locator("#flow li").first.wait_for()
            overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} scrolls sideways on a phone by {overflow}px"
        assert urls and all(u.startswith(web_stack.url + "/") for u in urls), \
            [u for u in urls if not u.startswith(web_stack.url)]
    finally:
        tab.close()


def test_the_answer_event_reaches_a_page_that_reconnects(page, web_stack):
    """An answer published while no browser listened is still shown: the page asks /api/answers on (re)connect."""
    page.goto(web_stack.url + "/")
    question = QuestionEvent(request_id=new_request_id("late"), question="What does lecanemab target?")
    replies = ask_via_kafka(web_stack.settings, [question])
    assert question.request_id in replies
    entry = {"rid": question.request_id, "question": question.question, "scope": "MIXED", "stages": []}
    page.evaluate(f"sessionStorage.setItem('citestream.asked', JSON.stringify([{json.dumps(entry)}]))")
    page.reload()
    page.locator(f"#card-{question.request_id} .tags").wait_for(timeout=30_000)
