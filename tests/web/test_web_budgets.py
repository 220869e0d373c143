"""What one visitor may make the page do (issue 48): requests and writes a minute, bytes uploaded a day, event
streams, timeline reads and PDF downloads of its own, PDF work bounded in number and in time, chunk boxes kept, the
page images' cache bounded in bytes, and the uploads' room on disk. Each limit is shown on a real `citestream web`
over the stack's broker and Postgres, with another visitor served meanwhile. Every loopback address is one visitor
(issue 54), so visitors here come through a proxy of the test's (127.0.0.100, named in
``CITESTREAM_UI_TRUSTED_PROXIES``) that names each one in ``X-Forwarded-For``, as a reverse proxy in front of the page
does.

The page here is a second one on the package's stack, with small budgets and a state folder of its own (its page
cache and uploads), reading the stack's record key and the app role's passfile.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from citestream.config import get_settings
from citestream.web.budgets import Budgets
from citestream.web.settings import WebSettings

from tests.support.browser import WebProcess
from tests.support.common import new_request_id
from tests.support.reliability import free_port
from tests.support.web import ingest_pdfs, write_pdf

pytestmark = pytest.mark.e2e

BUDGETS = {"CITESTREAM_UI_REQUESTS_PER_MINUTE": "40", "CITESTREAM_UI_WRITES_PER_MINUTE": "8",
           "CITESTREAM_UI_UPLOAD_MB_PER_DAY": "0.5", "CITESTREAM_UI_UPLOAD_MAX_MB": "1",
           "CITESTREAM_UI_MAX_STREAMS_PER_CLIENT": "2", "CITESTREAM_UI_TIMELINE_READS_PER_CLIENT_PER_MINUTE": "2",
           "CITESTREAM_UI_TIMELINE_READS_PER_MINUTE": "120", "CITESTREAM_UI_PDF_JOBS": "3",
           "CITESTREAM_UI_PDF_JOBS_PER_CLIENT": "2", "CITESTREAM_UI_PAGE_CACHE_MB": "1.5",
           "CITESTREAM_UI_UPLOADS_MAX_MB": "0.6", "CITESTREAM_UI_UPLOADS_PER_MINUTE_TOTAL": "600",
           "CITESTREAM_UI_PDF_DOWNLOADS": "3", "CITESTREAM_UI_PDF_DOWNLOADS_PER_CLIENT": "2",
           "CITESTREAM_UI_TRUSTED_PROXIES": "127.0.0.100"}
PROXY = "127.0.0.100"
SLOW_PAGES = 12
_WORDS = ["cleaning validation", "process validation", "stability testing", "container closure", "sterile filling",
          "batch release", "change control"]


def visitor(page, n: int, **kw) -> httpx.Client:
    """Visitor 10.0.0.<n>, through the trusted proxy: the page tells visitors apart by address."""
    return httpx.Client(base_url=page.url, timeout=kw.pop("timeout", 30), headers={"x-forwarded-for": f"10.0.0.{n}"},
                        transport=httpx.HTTPTransport(local_address=PROXY), **kw)


def local(page, n: int, **kw) -> httpx.Client:
    """A client of this machine connecting straight from loopback address 127.0.0.<n>, no proxy."""
    return httpx.Client(base_url=page.url, timeout=kw.pop("timeout", 30),
                        transport=httpx.HTTPTransport(local_address=f"127.0.0.{n}"), **kw)


def _page_env(web_stack, state: Path, **budgets: str) -> dict[str, str]:
    """A second page's environment on the stack: these budgets, a state folder of its own, the stack's record key
    and the page role's passfile."""
    shared = get_settings()
    database = web_stack.database_url.rsplit("/", 1)[1]
    return {**web_stack.env, **BUDGETS, **budgets, "CITESTREAM_STATE_DIR": str(state),
            "CITESTREAM_RECORD_PUBLIC_KEY_FILE": str(shared.record_public_key_path),
            "CITESTREAM_PAGE_DATABASE_URL": f"postgresql://{shared.page_db_user}@127.0.0.1:{shared.pg_port}/{database}"
                                            f"?passfile={shared.pgpass_file(shared.page_db_user)}"}


@pytest.fixture(scope="module")
def page(web_stack, tmp_path_factory):
    state = tmp_path_factory.mktemp("budget-page-state")
    env = _page_env(web_stack, state)
    web = WebProcess(tmp_path_factory.mktemp("budget-page") / "web.log", free_port(28480), env)
    web.wait_ready()
    web.state = state
    try:
        yield web
    finally:
        web.stop()


def test_the_budget_table_forgets_the_oldest_client_first_but_never_one_holding_a_slot():
    budgets = Budgets(WebSettings())
    import citestream.web.budgets as module

    budgets.take("holder", "streams", 4, "x")
    for i in range(module.CLIENTS + 5):
        budgets.client(f"c{i}")
    assert "holder" in budgets._clients and len(budgets._clients) <= module.CLIENTS + 1
    budgets.give_back("holder", "streams")


def test_all_visitors_together_have_a_writes_budget_of_the_page():
    budgets = Budgets(WebSettings(writes_per_minute_total=60, uploads_per_minute_total=10))
    assert [budgets.all_writes.allow() == 0 for _ in range(7)] == [True] * 6 + [False]  # a tenth at once
    assert [budgets.all_uploads.allow() == 0 for _ in range(2)] == [True, False]


def test_every_loopback_address_is_one_visitor():
    from citestream.web.budgets import LOOPBACK, client_of

    for address in ("127.0.0.1", "127.0.0.2", "127.255.3.4", "::1", "::ffff:127.0.0.9"):
        assert client_of({"client": (address, 5000)}) == LOOPBACK, address
    assert client_of({"client": ("10.0.0.1", 5000)}) == "10.0.0.1"
    assert client_of({"client": ("::ffff:10.0.0.1", 5000)}) == "::ffff:10.0.0.1"
    assert client_of({}) == "unknown"


def test_a_local_user_gets_no_more_streams_from_more_loopback_addresses(page):
    """Issue 54: one local user connecting from 127.0.0.11, .12, .13 ... had a budget per address (with 8 of them
    all 32 event streams); now they are one visitor, whose share is 2 streams here."""
    with contextlib.ExitStack() as held:
        clients = [held.enter_context(local(page, n, timeout=httpx.Timeout(10, read=30))) for n in range(11, 15)]
        streams = [held.enter_context(c.stream("GET", "/api/events")) for c in clients]  # 200 holds one open
        assert [s.status_code for s in streams] == [200, 200, 429, 429]
        assert all("live streams" in json.loads(s.read())["error"] for s in streams[2:])
        with visitor(page, 10) as other:  # a visitor of another address is served meanwhile
            assert held.enter_context(other.stream("GET", "/api/events")).status_code == 200


def test_requests_a_minute_are_one_clients_own(page):
    with visitor(page, 2) as greedy, visitor(page, 3) as other:
        statuses = [greedy.get("/api/documents").status_code for _ in range(20)]
        assert statuses[:10] == [200] * 10 and 429 in statuses, statuses  # a quarter of 40 at once, then refill
        refused = greedy.get("/api/documents")
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert "requests a minute" in refused.json()["error"]
        assert other.get("/api/documents").status_code == 200  # another visitor is served meanwhile
        assert greedy.get("/healthz").status_code == 200 and greedy.get("/").status_code == 200  # pages are not API


def test_a_visitor_cannot_pick_another_address_with_a_header(page):
    """uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise: a visitor naming a new address on
    every request would have had a new budget each time."""
    with local(page, 1) as spoofer:  # straight from 127.0.0.1, not through the proxy the page believes
        statuses = [spoofer.get("/api/documents", headers={"x-forwarded-for": f"10.9.{i}.{i}"}).status_code
                    for i in range(20)]
    assert 429 in statuses, statuses


def test_writes_a_minute_are_one_clients_own(page):
    with visitor(page, 4) as asker, visitor(page, 5) as other:
        statuses = [asker.post("/api/questions", json={"question": f"What does lecanemab target? {i}"}).status_code
                    for i in range(6)]
        assert statuses[:4] == [202] * 4 and statuses[-1] == 429, statuses  # half of 8 at once
        assert other.post("/api/questions", json={"question": "What does lecanemab target?"}).status_code == 202


def test_uploads_in_flight_together_never_pass_the_room(tmp_path):
    """Issue 54: the room was measured once per upload, before it streamed; eight uploads streaming at once each saw
    it free. Now each chunk is reserved in the room every upload shares."""
    import asyncio

    from citestream.web import uploads
    from citestream.web.upload_room import UploadRoom

    folder = tmp_path / "uploads"
    room = UploadRoom(1000, lambda: uploads.uploads_bytes(folder))

    async def chunks(n: int):
        yield b"%PDF-" + bytes([n]) * 95
        for _ in range(3):
            await asyncio.sleep(0.01)  # every upload is streaming before any ends
            yield bytes([n]) * 100

    async def one(n: int):
        await room.refresh()
        try:
            return await uploads.save_upload(chunks(n), f"u{n}.pdf", folder, 10_000, room=room)
        except uploads.UploadsFull:
            return None

    async def all_at_once():
        return await asyncio.gather(*(one(n) for n in range(8)))

    saved = [s for s in asyncio.run(all_at_once()) if s is not None]
    assert len(saved) == 2 and uploads.uploads_bytes(folder) <= 1000  # 400 bytes each: two fit, not eight
    assert room.used() == 800 and not list(folder.glob(".incoming-*"))
    asyncio.run(room.refresh())
    assert room.used() == 800  # measured: the landed ones are on disk, counted once


def test_parallel_uploads_to_the_page_never_pass_its_room(page):
    """Two visitors stream 400 kB each at once into a room of 0.6 MB: one is refused with 507, whichever it is."""
    import threading

    body = write_pdf(page.state.parent / "parallel.pdf", "Parallel", "Room. " * 40).read_bytes()
    body += b"\n%" + b"0" * (400_000 - len(body))
    started = threading.Barrier(2)

    def slowly():
        started.wait(10)
        for i in range(0, len(body), 20_000):
            time.sleep(0.05)  # 1 s for the whole body: both stream at once
            yield body[i:i + 20_000]

    def upload(n: int) -> httpx.Response:
        with visitor(page, n) as client:
            return client.post("/api/documents", content=slowly(), headers={"x-filename": f"parallel{n}.pdf",
                                                                            "content-type": "application/pdf"})

    with ThreadPoolExecutor(2) as pool:
        statuses = sorted(r.status_code for r in pool.map(upload, (20, 21)))
    on_disk = list((page.state / "uploads").rglob("parallel*.pdf"))
    try:
        assert statuses == [202, 507], statuses
        assert sum(p.stat().st_size for p in on_disk) <= 0.6 * (1 << 20)
    finally:
        for path in on_disk:  # the room is the next test's
            path.unlink(missing_ok=True)


def test_bytes_uploaded_a_day_are_one_clients_own_and_uploads_have_a_room(page, tmp_path):
    pdf = write_pdf(tmp_path / "small.pdf", "Budget", "Cleaning validation sets residue limits for shared "
                                                      "equipment. " * 40)
    body = pdf.read_bytes() + b"\n%" + b"0" * (200_000 - pdf.stat().st_size)  # 200 kB, still a PDF

    def upload(client, name):
        return client.post("/api/documents", content=body, headers={"x-filename": name,
                                                                    "content-type": "application/pdf"})

    with visitor(page, 6) as uploader, visitor(page, 7) as other:
        assert [upload(uploader, f"u{i}.pdf").status_code for i in range(2)] == [202, 202]
        over = upload(uploader, "u3.pdf")  # 600 kB of a 512 kB day: refused by its Content-Length
        assert over.status_code == 429 and "megabytes of the day" in over.json()["error"]
        streamed = uploader.post("/api/documents", content=(body[i:i + 8192] for i in range(0, len(body), 8192)),
                                 headers={"x-filename": "u4.pdf", "content-type": "application/pdf"})
        assert streamed.status_code == 429  # chunked: refused at the chunk past the day's bytes
        assert upload(other, "o1.pdf").status_code == 202  # another visitor still uploads...
        full = upload(other, "o2.pdf")  # ...until the uploads' room (0.6 MB) is taken
        assert full.status_code == 507, full.text
    uploads = page.state / "uploads"
    assert not list(uploads.glob(".incoming-*"))  # nothing refused was kept
    assert sum(p.stat().st_size for p in uploads.rglob("*.pdf")) <= 0.6 * (1 << 20)


def test_event_streams_and_timeline_reads_are_one_clients_own(page):
    with visitor(page, 8, timeout=httpx.Timeout(10, read=30)) as watcher, \
            visitor(page, 9, timeout=httpx.Timeout(10, read=30)) as other, contextlib.ExitStack() as held:
        mine = [held.enter_context(watcher.stream("GET", "/api/events")) for _ in range(2)]
        assert all(s.status_code == 200 for s in mine)
        third = watcher.get("/api/events")
        assert third.status_code == 429 and "live streams" in third.json()["error"]
        theirs = held.enter_context(other.stream("GET", "/api/events"))
        assert theirs.status_code == 200
        reads = [watcher.get(f"/api/requests/{new_request_id('tlb')}").status_code for _ in range(3)]
        assert 429 in reads, reads  # one read at once, two a minute for this address
        assert other.get(f"/api/requests/{new_request_id('tlb')}").status_code == 200


def _slow_pdf(path: Path) -> Path:
    """Pages that parse in milliseconds and render in most of a second: a 3,000-px noise image on each."""
    import numpy as np
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    noise = (np.random.default_rng(0).random((3000, 3000, 3)) * 255).astype("uint8")
    jpeg = io.BytesIO()
    Image.fromarray(noise).save(jpeg, "JPEG", quality=30)
    image = ImageReader(io.BytesIO(jpeg.getvalue()))
    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    for n in range(SLOW_PAGES):
        text = pdf.beginText(72, 760)
        for line in range(3):
            text.textLine(f"Page {n + 1}, line {line + 1}: {_WORDS[(n + line) % len(_WORDS)]} sets residue limits "
                          f"for shared equipment in batch {n * 7 + line}.")
        pdf.drawText(text)
        for k in range(6):
            pdf.drawImage(image, k, k, 612 - k, 690 - k)
        pdf.showPage()
    pdf.save()
    return path


def test_slow_renders_never_stall_the_page_and_the_cache_stays_in_its_bytes(page, web_stack, embedder, tmp_path):
    """Twelve image requests for pages of most of a second each, from three visitors at once: at most three run or
    wait (the rest 503 at once, or 429 past two a visitor), and meanwhile a fourth visitor's database reads are
    answered at once (on the default thread pool, six such waits held every thread). The cache of rendered
    images stays within its 1.5 MB whatever was rendered, keeping the page shown last."""
    pdf = _slow_pdf(tmp_path / f"Slow_{uuid.uuid4().hex[:6]}.pdf")
    ingest_pdfs(web_stack.database_url, [pdf], embedder)
    doc_id = pdf.stem
    clients = [visitor(page, 20 + i, timeout=60) for i in range(3)]
    try:
        with ThreadPoolExecutor(max_workers=SLOW_PAGES) as pool, visitor(page, 30) as reader:
            futures = [pool.submit(clients[n % 3].get, f"/api/pages/{doc_id}/{n + 1}.png") for n in range(SLOW_PAGES)]
            time.sleep(0.3)
            waits = []
            for _ in range(5):
                started = time.monotonic()
                assert reader.get("/api/documents").status_code == 200
                waits.append(time.monotonic() - started)
            statuses = sorted(f.result().status_code for f in futures)
    finally:
        for client in clients:
            client.close()
    print(f"database reads while the renders ran: {[round(w, 2) for w in waits]} s; image answers {statuses}")
    assert max(waits) < 1.5, waits
    assert statuses.count(200) <= 6 and set(statuses) <= {200, 429, 503}, statuses
    assert 503 in statuses or 429 in statuses
    cache = page.state / "web" / "pages"
    with visitor(page, 31, timeout=60) as viewer:
        for n in range(1, 7):
            while (shown := viewer.get(f"/api/pages/{doc_id}/{n}.png")).status_code in (429, 503):
                time.sleep(1)
            assert shown.status_code == 200
            total = sum(p.stat().st_size for p in cache.rglob("*.png"))
            assert total <= 1.5 * (1 << 20) or len(list(cache.rglob("*.png"))) == 1, total
    last = [p for p in cache.rglob("*.png") if p.name.startswith("p6-")]
    assert last, "the page shown last was removed"


def test_chunk_boxes_are_made_once(page, web_stack):
    with visitor(page, 40, timeout=60) as viewer:
        chunk = f"{sorted(web_stack.pdf_dir.glob('*.pdf'))[0].stem}-chunk-0"  # a demo PDF, as ingested
        first = viewer.get(f"/api/chunks/{chunk}")
        assert first.status_code == 200 and first.json()["boxes"], first.text
        started = viewer.get("/healthz").json()["pdf_jobs"]["started"]
        again = viewer.get(f"/api/chunks/{chunk}")
        assert again.json()["boxes"] == first.json()["boxes"]
        assert viewer.get("/healthz").json()["pdf_jobs"]["started"] == started  # kept, not made again


def _big_pdf(path: Path, mb: int) -> Path:
    """A one-page PDF of ``mb`` megabytes (padding after its end): more than the sockets between page and visitor
    hold, so a download nobody reads stays open on the server."""
    write_pdf(path, "Big", "Cleaning validation sets residue limits for shared equipment. " * 20)
    with path.open("ab") as out:
        out.write(b"\n%" + b"0" * (mb << 20))
    return path


def test_pdf_downloads_are_streamed_and_one_visitor_holds_at_most_its_share(page, web_stack, embedder, tmp_path):
    """Issue 54 M2: every download held the whole PDF (up to 64 MB) in memory, with no cap but the request budget.
    Now it is sent in chunks from one opened file, at most two at once a visitor and three for the page: a visitor
    holding two unread is refused a third (429), another visitor is served meanwhile, and past the page's three
    downloads the next waits (503). Every download is the file's bytes."""
    pdf = _big_pdf(tmp_path / f"Big_{uuid.uuid4().hex[:6]}.pdf", 24)
    ingest_pdfs(web_stack.database_url, [pdf], embedder)
    url, expected = f"/api/pdfs/{pdf.stem}.pdf", pdf.read_bytes()
    slow = httpx.Timeout(10, read=60)
    with visitor(page, 50, timeout=slow) as greedy, visitor(page, 51, timeout=slow) as other, \
            visitor(page, 52) as third, contextlib.ExitStack() as held:
        mine = [held.enter_context(greedy.stream("GET", url)) for _ in range(2)]  # headers read, bodies not
        assert [m.status_code for m in mine] == [200, 200]
        refused = greedy.get(url)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1, refused.status_code
        assert "PDF" in refused.json()["error"]
        theirs = held.enter_context(other.stream("GET", url))  # another visitor is served meanwhile
        assert theirs.status_code == 200
        full = third.get(url)  # the page's three are all held
        assert full.status_code == 503 and int(full.headers["retry-after"]) >= 1, full.status_code
        assert theirs.read() == expected
        assert [m.read() == expected for m in mine] == [True, True]
    with visitor(page, 53) as later:  # every slot given back once its download ended
        deadline = time.monotonic() + 10
        while (again := later.get(url)).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert again.content == expected and again.headers["content-length"] == str(len(expected))


def test_a_pdf_download_its_client_stops_reading_is_ended_and_its_slots_given_back(web_stack, embedder, tmp_path):
    """Review after issue 54, N2: a visitor that stopped reading a download held its slots for as long as it kept
    the connection open (the send waited for it with no end), so four addresses could keep every visitor from
    /api/pdfs. Now each chunk has ``CITESTREAM_UI_PDF_SEND_DEADLINE_S`` (1 s here) to be taken: past it the download
    is ended, cut short, and the page's one download slot serves the next visitor."""
    pdf = _big_pdf(tmp_path / f"Stalled_{uuid.uuid4().hex[:6]}.pdf", 24)
    ingest_pdfs(web_stack.database_url, [pdf], embedder)
    url, expected = f"/api/pdfs/{pdf.stem}.pdf", pdf.read_bytes()
    (tmp_path / "state").mkdir()
    env = _page_env(web_stack, tmp_path / "state", CITESTREAM_UI_PDF_DOWNLOADS="1",
                    CITESTREAM_UI_PDF_DOWNLOADS_PER_CLIENT="1", CITESTREAM_UI_PDF_SEND_DEADLINE_S="1")
    web = WebProcess(tmp_path / "web.log", free_port(28580), env)
    try:
        web.wait_ready()
        with visitor(web, 60, timeout=httpx.Timeout(10, read=60)) as stalled, visitor(web, 61) as next_one, \
                stalled.stream("GET", url) as held:  # headers read, the body never
            assert held.status_code == 200
            started = time.monotonic()
            assert next_one.get(url).status_code == 503  # the page's one download is held
            while (health := next_one.get("/healthz").json())["pdf_downloads"]["open"] and \
                    time.monotonic() - started < 20:
                time.sleep(0.2)
            assert health["pdf_downloads"]["open"] == 0, "the stalled download still holds its slot"
            assert time.monotonic() - started < 8  # within about the deadline, once the sockets are full
            served = next_one.get(url)
            assert served.status_code == 200 and served.content == expected
            # the stalled one was cut short, never sent whole: ended by the page (its body incomplete), or, when its
            # bytes waited the deadline for a client that read none, reset by the kernel (TCP_USER_TIMEOUT); which of
            # the two the client sees first depends on when it starts reading
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
                held.read()
    finally:
        web.stop()


def _established(port: int, peer_port: int) -> bool:
    """Whether the page's end of the connection from ``peer_port`` is still open (Linux's table of TCP sockets)."""
    wanted = (f"{port:04X}", f"{peer_port:04X}")
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if (local.rsplit(":", 1)[1], remote.rsplit(":", 1)[1]) == wanted and state == "01":
            return True
    return False


def test_a_connection_whose_client_reads_nothing_is_ended_by_the_page(web_stack, embedder, tmp_path):
    """Third review after issue 54: a download past its deadline gave its slots back, but the page's close waited for
    the unsent bytes with no end, so clients that read nothing could pile up open connections, each holding its
    buffers, until the page ran out of memory or descriptors. The page's connections now carry ``TCP_USER_TIMEOUT``
    (the send deadline, 1 s here): the kernel ends one whose bytes wait that long."""
    import socket

    pdf = _big_pdf(tmp_path / f"Unread_{uuid.uuid4().hex[:6]}.pdf", 24)
    ingest_pdfs(web_stack.database_url, [pdf], embedder)
    (tmp_path / "state").mkdir()
    env = _page_env(web_stack, tmp_path / "state", CITESTREAM_UI_PDF_SEND_DEADLINE_S="1")
    port = free_port(28590)
    web = WebProcess(tmp_path / "web.log", port, env)
    try:
        web.wait_ready()
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # takes little, then reads nothing
        client.connect(("127.0.0.1", port))
        client.sendall(f"GET /api/pdfs/{pdf.stem}.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        peer_port = client.getsockname()[1]
        started = time.monotonic()
        while _established(port, peer_port) and time.monotonic() - started < 30:
            time.sleep(0.5)
        assert not _established(port, peer_port), "the page still holds a connection whose client reads nothing"
        client.close()
    finally:
        web.stop()


def test_a_download_whose_check_fails_unexpectedly_gives_its_slots_back(monkeypatch):
    """Review after issue 54, M2's residual: an error other than ``PageUnavailable`` while the file was checked (an
    I/O error while hashing) kept both of the download's slots for good. Now they are given back."""
    from citestream.web import app as web_app
    from citestream.web.queries import DocumentInfo

    doc = DocumentInfo(doc_id="Broken", pdf="Broken.pdf", title="Broken", authority="MIXED", pages=1, chunks=1,
                       index_version="idx", ingested_at="", source="/nowhere/Broken.pdf", content_sha256="0" * 64,
                       origin="cli")

    def unreadable(_doc):
        raise OSError("I/O error while hashing")

    monkeypatch.setattr(web_app.queries, "get_document", lambda engine, doc_id: doc)
    monkeypatch.setattr(web_app.render, "open_source", unreadable)
    page_app = web_app.create_app(web=WebSettings(pdf_downloads=1, pdf_downloads_per_client=1))

    async def tries() -> list[int]:  # in process, no lifespan: the bridge is not needed here
        transport = httpx.ASGITransport(page_app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            codes = [(await client.get("/api/pdfs/Broken.pdf")).status_code for _ in range(3)]
            return [*codes, (await client.get("/healthz")).json()["pdf_downloads"]["open"]]

    assert asyncio.run(tries()) == [500, 500, 500, 0]  # one slot for the page: each attempt got it back


def test_a_pdf_changed_while_it_is_sent_is_cut_short(tmp_path):
    """The download is checked against the ingested SHA-256 before it starts and again as it is sent, from the one
    opened file; its last chunk is held back until the hash is known, so a file changed meanwhile is never sent
    whole."""
    import hashlib

    from citestream.web import render
    from citestream.web.queries import DocumentInfo

    pdf = _big_pdf(tmp_path / "Sent.pdf", 1)
    data = pdf.read_bytes()
    doc = DocumentInfo(doc_id="Sent", pdf="Sent.pdf", title="Sent", authority="MIXED", pages=1, chunks=1,
                       index_version="idx", ingested_at="", source=str(pdf),
                       content_sha256=hashlib.sha256(data).hexdigest(), origin="cli")
    with render.open_source(doc) as source:
        assert source.size == len(data) and b"".join(source.chunks()) == data
    with render.open_source(doc) as source:
        chunks = source.chunks()
        sent = next(chunks)
        with pdf.open("r+b") as changed:  # the same file, changed in place after the check
            changed.seek(len(data) - 10)
            changed.write(b"1" * 10)
        with pytest.raises(render.PageUnavailable, match="changed"):
            for chunk in chunks:
                sent += chunk
        assert len(sent) < len(data)
    with pytest.raises(render.PageUnavailable, match="changed"):
        render.open_source(doc)
