"""The web page in a real browser: Debian's headless Chromium driven by Playwright, against a real worker and
a real `citestream web` process on the session's broker and Postgres (tests/support/web.py).

Screenshots of each view go to $CITESTREAM_SCREENSHOTS (docs/screenshots for the README) or a temporary folder.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import datetime, timedelta, UTC

import pytest

from citestream.models import FallbackRateAlert, QuestionEvent, ValidatedAnswer
from citestream.sealing import RecordSealer

from tests.support.browser import chromium, chromium_missing
from tests.support.common import new_request_id
from tests.support.web import ask_via_kafka, publish_raw, write_pdf

pytestmark = [pytest.mark.e2e, pytest.mark.browser,
              pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")]

ANSWERABLE = "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"
ANSWER_TIMEOUT_MS = 120_000
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser():
    with chromium(DESKTOP) as context:
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
    # The card appears only once the POST returns its request id: until then ".card >> nth=0" is the previous
    # question's card (rendered from sessionStorage), so the card is found by the id the server gave.
    with page.expect_response(lambda r: r.url.endswith("/api/questions") and r.request.method == "POST") as sent:
        page.press("#question", "Enter")
    card = page.locator(f'#answers .card[data-rid="{sent.value.json()["request_id"]}"]')
    card.locator(".tags").wait_for(timeout=ANSWER_TIMEOUT_MS)
    return card


INTERNAL = re.compile(r"documents\.ingest|qa\.(?:facts|relevant|prompts|generations|deadletter)|ops\.alerts|"
                      r"envelope|root:|idx-\d|\bweb-[0-9a-f]{6,}|-chunk-\d|qa-v\d|WRONG_AUTHORITY|NOT_RELEVANT|"
                      r"NOT_ANSWERING|FALSE_PREMISE|relevance \d|backstop")
"""What a user must not read by default (issue 55): topic names, index ids, roots, request and chunk ids, codes."""


def plain(card) -> str:
    """The card's text as shown (closed "details" hold the internal names), checked free of them."""
    shown = card.inner_text()
    found = INTERNAL.search(shown)
    assert not found, f"internal words shown by default: {found.group(0)!r} in {shown!r}"
    return shown


def test_ask_shows_the_answer_with_its_citations(page, web_stack):
    card = ask(page, web_stack.url, ANSWERABLE)
    assert card.locator(".badge.cls-definitive").inner_text() == "answered"
    assert "70%" in card.locator(".sentence").first.inner_text()
    link = card.locator(".cite-link").first
    assert link.inner_text() == "(smoke-001.pdf, page 1)"
    # its sentence, whole, never the heading line above it ("DOAC Stroke Prevention")
    assert link.get_attribute("href").startswith("/cite?chunk=smoke-001-chunk-0&quote=Direct%20oral%20anticoagulants")
    plain(card)
    fits(page, "#answers")
    card.locator("details.ops summary").click()  # for operators: the request, index, policy and timings
    assert card.locator("a.rid").inner_text().startswith("web-")
    assert "smoke-001-chunk-0" in card.locator("details.ops").inner_text()
    assert card.locator(".trace dt").all_inner_texts() == ["retrieve", "filter", "assemble", "generate", "validate"]
    page.screenshot(path=str(web_stack.shots / "ask.png"), full_page=True)
    assert page.errors == []


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_an_answer_and_a_refusal_say_what_happened_in_plain_words(browser, web_stack, size):
    tab = browser.new_page()
    tab.set_viewport_size(size)
    tab.errors = []
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))
    try:
        answered = ask(tab, web_stack.url, ANSWERABLE)
        plain(answered)
        refused = ask(tab, web_stack.url, "What is the boiling point of liquid nitrogen?")
        assert refused.locator(".badge.cls-refusal").inner_text() == "no answer"
        shown = plain(refused)
        assert "Not found in provided PDFs" in shown and "Why:" in shown
        assert "all documents" in shown  # where it looked
        refused.locator(".help .searched").wait_for(timeout=10_000)
        plain(refused)
        fits(tab, "#answers")
        tab.screenshot(path=str(web_stack.shots / f"ask-refusal-{size['width']}.png"), full_page=True)
        refused.locator("details.ops summary").click()
        assert refused.locator("details.ops a.rid").inner_text().startswith("web-")
        assert tab.errors == []
    finally:
        tab.close()


def test_a_citation_opens_its_page_rendered_with_the_chunk_beside_it(page, web_stack):
    card = ask(page, web_stack.url, ANSWERABLE)
    card.locator(".cite-link").first.focus()
    page.keyboard.press("Enter")  # keyboard-usable: a citation is a real link
    page.wait_for_url("**/cite?chunk=smoke-001-chunk-0&quote=*")
    page.locator("#page-figure").wait_for(state="visible", timeout=30_000)
    wait_until(page, "document.getElementById('page-image').complete && "
                     "document.getElementById('page-image').naturalWidth > 600")
    assert page.locator("#cite-title").inner_text() == "DOAC Stroke Prevention"  # the PDF's own title
    meta = page.locator("#cite-meta").inner_text()
    assert "smoke-001.pdf" in meta and "page 1 of 1" in meta and "all documents" in meta
    assert "70%" in page.locator("#quote-text").inner_text()
    assert page.locator("#chunk-text mark").inner_text().endswith("approximately 70%.")  # across the heading's line
    assert "ARISTOTLE" not in page.locator("#chunk-text mark").inner_text()  # the next sentence is not marked
    assert page.locator("#page-frame .hl").count() >= 1, "the quoted sentence is highlighted on the page image"
    image = page.request.get(web_stack.url + page.locator("#page-image").get_attribute("src"))
    assert image.ok and image.headers["content-type"] == "image/png" and image.body()[:8] == b"\x89PNG\r\n\x1a\n"
    page.screenshot(path=str(web_stack.shots / "citation.png"), full_page=True)
    assert page.errors == []


def _area(page) -> float:
    return page.evaluate("[...document.querySelectorAll('#page-frame .hl')].reduce((s, e) => s + "
                         "parseFloat(e.style.width) * parseFloat(e.style.height), 0)")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_citation_marks_only_its_sentence_copies_opens_the_pdf_and_zooms(browser, web_stack, size):
    """Issue 55: the quoted sentence alone is highlighted (on the image and in the passage), "Copy citation" puts
    "title, issuer, page, sentence" on the clipboard, a link opens the PDF at the page, the image zooms in its own
    box, and nothing scrolls sideways at 1280 x 800 or on a phone."""
    browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=web_stack.url)
    tab = browser.new_page()
    tab.set_viewport_size(size)
    tab.errors = []
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))
    second = "The drug targets soluble amyloid-beta protofibrils and received FDA accelerated approval in 2023."
    try:
        tab.goto(web_stack.url + "/cite?chunk=smoke-003-chunk-0")  # no sentence named: the whole passage
        tab.locator("#page-figure").wait_for(state="visible", timeout=30_000)
        whole = _area(tab)
        tab.goto(web_stack.url + "/cite?chunk=smoke-003-chunk-0&quote=" + second.replace(" ", "%20"))
        tab.locator("#page-figure").wait_for(state="visible", timeout=30_000)
        wait_until(tab, "document.getElementById('page-image').naturalWidth > 0")
        assert tab.locator("#quote-text").inner_text() == second
        assert tab.locator("#chunk-text mark").inner_text() == second  # the passage marks the sentence only
        assert 0 < _area(tab) < 0.8 * whole, "only the quoted sentence is highlighted, not the whole passage"
        fits(tab, "main")
        width = tab.evaluate("document.getElementById('page-image').getBoundingClientRect().width")
        assert width >= 0.9 * size["width"] if size is PHONE else width >= 700, f"the page image is {width} px wide"

        tab.click("#copy-cite")
        tab.locator("#copy-status", has_text="Copied").wait_for()
        copied = tab.evaluate("navigator.clipboard.readText()")
        assert copied == f"Lecanemab in Early Alzheimer's, issuer not known, page 1: “{second}”"

        href = tab.locator("#open-pdf").get_attribute("href")
        assert href == "/api/pdfs/smoke-003.pdf#page=1"
        pdf = tab.request.get(web_stack.url + href.split("#")[0])
        assert pdf.ok and pdf.headers["content-type"] == "application/pdf" and pdf.body()[:5] == b"%PDF-"

        tab.click("#zoom-in")
        tab.click("#zoom-in")
        assert tab.locator("#zoom-level").inner_text() == "225%"
        zoomed = tab.evaluate("document.getElementById('page-image').getBoundingClientRect().width")
        assert zoomed > 2 * width - 2
        assert tab.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
            "zooming scrolls the page's own box, not the page"
        tab.screenshot(path=str(web_stack.shots / f"citation-{size['width']}.png"), full_page=True)
        tab.click("#zoom-fit")
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_a_refusal_says_what_was_searched_what_another_scope_holds_and_how_to_add_a_document(browser, web_stack,
                                                                                              size):
    """Issue 55: refused in scope FDA (no FDA documents here), the card names what it searched, says that another
    scope holds an answer (the page asks all documents too), and offers to add a PDF; in plain words, fitting."""
    tab = browser.new_page()
    tab.set_viewport_size(size)
    try:
        card = ask(tab, web_stack.url, ANSWERABLE, scope="FDA")
        assert card.locator(".badge.cls-refusal").count() == 1
        help_ = card.locator(".help")
        help_.locator(".searched").wait_for(timeout=10_000)
        assert "no FDA documents have been added yet" in help_.locator(".searched").inner_text()
        other = help_.locator(".other", has_text="Another scope holds")
        other.wait_for(timeout=ANSWER_TIMEOUT_MS)
        assert "70%" in other.inner_text() and other.locator(".cite-link").count() == 1
        assert help_.locator(".add a").get_attribute("href") == "/documents"
        plain(card)
        fits(tab, "#answers")
        tab.screenshot(path=str(web_stack.shots / f"refusal-help-{size['width']}.png"), full_page=True)

        mixed = ask(tab, web_stack.url, "What is the boiling point of liquid nitrogen?")
        mixed.locator(".help .searched").wait_for(timeout=10_000)
        searched = mixed.locator(".help .searched").inner_text()
        assert searched.startswith("Searched: all ") and "DOAC Stroke Prevention" in searched
        assert mixed.locator(".help .other").count() == 0  # all documents were searched already
    finally:
        tab.close()


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


def fits(page, selector: str = "main") -> None:
    """Nothing scrolls sideways: neither the element nor the page (issue 55)."""
    widths = page.evaluate(f"""(() => {{ const el = document.querySelector({json.dumps(selector)});
        const doc = document.documentElement;
        return [el.scrollWidth, el.clientWidth, doc.scrollWidth, doc.clientWidth]; }})()""")
    assert widths[0] <= widths[1], f"{selector} is {widths[0]} px wide in a {widths[1]} px box"
    assert widths[2] <= widths[3], f"the page is {widths[2]} px wide in a {widths[3]} px window"


def test_documents_list_and_upload_through_documents_ingest(page, web_stack, tmp_path):
    page.goto(web_stack.url + "/documents")
    page.locator("#docs tbody tr").first.wait_for()
    # each document by its real title (the PDF's own), its file name beside it once
    smoke = page.locator("#docs tbody tr[data-doc='smoke-001']")
    assert smoke.locator(".title").inner_text() == "DOAC Stroke Prevention"
    assert smoke.locator(".file-name").inner_text() == "smoke-001.pdf"
    assert smoke.inner_text().count("smoke-001") == 1, "the file name is not repeated as the title"
    assert "added by an operator" in smoke.locator("td.from").inner_text()  # ingested as the command line would
    assert smoke.locator(".badge.scope").inner_text() == "MIXED"
    assert smoke.locator("details.ops").get_attribute("open") is None  # ids and index only under "details"
    fits(page, ".table-wrap")
    # digits only: a hex marker such as "9e5" ends like an ICH code ("E5") and the file name would read as ICH's
    marker = str(uuid.uuid4().int)[:8]
    pdf = write_pdf(tmp_path / f"Uploaded guidance {marker}.pdf", "Uploaded guidance",
                    f"Cleaning validation marker {marker} sets residue limits for shared equipment.")
    page.set_input_files("#upload-file", str(pdf))
    page.click("#upload-form button[type=submit]")
    envelope = page.locator("#uploads .row .envelope").first
    envelope.wait_for(timeout=180_000)
    assert envelope.locator(".badge").first.inner_text() == "added"
    shown = envelope.inner_text()
    assert "documents.ingest" not in shown and "envelope" not in shown and "upload:" not in shown  # plain words
    envelope.locator("details.ops summary").click()
    assert f"upload:Uploaded-guidance-{marker}" in envelope.inner_text() and "origin upload" in envelope.inner_text()
    row = page.locator(f"#docs tbody tr[data-doc='upload:Uploaded-guidance-{marker}']")
    row.wait_for(timeout=10_000)
    assert row.locator(".title").inner_text() == "Uploaded guidance"
    assert row.locator(".file-name").inner_text() == f"Uploaded-guidance-{marker}.pdf"
    assert "uploaded on this page" in row.locator("td.from").inner_text()

    # who issued it, as read; this browser uploaded it, so it may correct it (issue 47)
    assert row.locator(".issuer").inner_text() == "FDA" and "file name" in row.inner_text()  # "...guidance..."
    assert page.locator("#docs tbody tr[data-doc='smoke-001']").locator("form.issuer-fix").count() == 0
    row.locator("form.issuer-fix select").select_option("WHO")
    row.locator("form.issuer-fix button").click()
    row.locator(".issuer", has_text="WHO").wait_for(timeout=180_000)
    assert "corrected by whoever uploaded it" in row.inner_text()
    fits(page, ".table-wrap")

    not_pdf = tmp_path / "notes.pdf"
    not_pdf.write_text("<script>alert(1)</script> not a pdf")
    page.set_input_files("#upload-file", str(not_pdf))
    page.click("#upload-form button[type=submit]")
    refused = page.locator("#uploads .row .error").first
    refused.wait_for()
    assert "not a PDF" in refused.inner_text()
    page.screenshot(path=str(web_stack.shots / "documents.png"), full_page=True)
    assert page.errors == []


def test_documents_fit_a_phone(browser, web_stack):
    tab = browser.new_page()
    tab.set_viewport_size({"width": 390, "height": 844})
    try:
        tab.goto(web_stack.url + "/documents")
        tab.locator("#docs tbody tr[data-doc='smoke-001']").wait_for()
        fits(tab, ".table-wrap")
        row = tab.locator("#docs tbody tr[data-doc='smoke-001']")
        assert row.locator(".title").is_visible() and row.locator(".issuer").is_visible()
        assert row.locator(".badge.scope").is_visible() and row.locator("td.from").is_visible()
        tab.screenshot(path=str(web_stack.shots / "phone-documents.png"), full_page=True)
    finally:
        tab.close()


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


def test_the_ask_page_shows_only_an_answer_to_the_question_and_scope_it_sent(page, web_stack):
    """Issue 54 M4: the page showed any sealed answer carrying its request id. A publisher whose own question is
    admitted first under a visitor's id gets a worker's sealed answer to *its* question under that id; the page now
    shows an answer only if it names the question and scope it sent, and keeps waiting otherwise (the ignored ones
    counted in ``#answers[data-unbound]`` and logged to the console). Here the page is one that did not send the
    question itself (restarted since, say), so its server has no record of it and passes the answers on: the
    browser's own check is what holds."""
    question = "What does lecanemab target?"
    rid = new_request_id("bound")
    page.goto(web_stack.url + "/")
    entry = {"rid": rid, "question": question, "scope": "MIXED", "stages": []}
    page.evaluate(f"sessionStorage.setItem('citestream.asked', JSON.stringify([{json.dumps(entry)}]))")
    warnings = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    page.reload()
    page.locator("#conn[data-state='ok']").wait_for()
    card = page.locator(f"#card-{rid}")
    assert card.locator(".pending").count() == 1

    other = QuestionEvent(request_id=new_request_id("other"), question=ANSWERABLE)
    answer = ask_via_kafka(web_stack.settings, [other])[other.request_id]  # about DOACs: "70%"
    sealer = RecordSealer.from_file(web_stack.settings.record_key_path)  # as a worker seals it
    for change in ({}, {"question": question, "scope": "FDA"}):  # another question; this question, another scope
        forged = ValidatedAnswer.model_validate({**answer.model_dump(mode="json"), **change, "request_id": rid})
        publish_raw(web_stack.settings, "answers", rid.encode(), sealer.payload(forged))
    ignored = "Number(document.querySelector('#answers').dataset.unbound || 0)"
    wait_until(page, f"{ignored} >= 2 || document.querySelector('#card-{rid} .tags') !== null")
    assert card.locator(".tags").count() == 0 and "70%" not in card.inner_text(), "another question's answer shown"
    assert card.locator(".pending").count() == 1
    assert any(rid in w and "another question or scope" in w for w in warnings), warnings

    genuine = QuestionEvent(request_id=rid, question=question)
    assert rid in ask_via_kafka(web_stack.settings, [genuine])
    card.locator(".tags").wait_for(timeout=30_000)
    shown = card.inner_text()
    assert "amyloid" in shown and "70%" not in shown
    assert page.errors == []
