"""What the page shows and what it holds: only records a worker wrote (their MAC holds), bodies capped while read,
event streams capped, timelines read once per cache period, rate-limited and never from another site, kept records
bounded in bytes — each with the page (and the stack's worker) staying up. A real `citestream web` process over
HTTP, on a real broker, worker and Postgres; the pure parts in process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import time
import uuid
from pathlib import Path

import httpx
import pytest

from citestream.ops.client import read_topic
from citestream.models import QuestionEvent, ValidatedAnswer
from citestream.sealing import RecordSealer
from citestream.web.kept import KeptEvents, event_bytes
from citestream.web.throttle import BodyTooLarge, PerMinute, read_capped
from citestream.web.views import WebEvent

from tests.support.browser import WebProcess
from tests.support.common import new_request_id
from tests.support.reliability import free_port
from tests.support.web import MAX_STREAMS, ask_via_kafka, in_thread, publish_raw

# --- pure parts -----------------------------------------------------------------------------------


def _event(rid: str, text_bytes: int) -> WebEvent:
    return WebEvent(kind="answer", topic="answers", request_id=rid, partition=0, offset=0,
                    data={"answer_text": "x" * text_bytes})


def test_kept_records_stay_within_their_byte_budget_newest_first():
    kept = KeptEvents(max_count=1000, max_bytes=50_000)
    for i in range(100):
        kept.add(_event(f"r{i}", 4_000))
    assert kept.bytes <= 50_000 and 10 <= len(kept) <= 12  # bytes, not the count, bound it
    assert kept.latest("r99") is not None and kept.latest("r0") is None
    assert [e.request_id for e in kept.recent(3)] == ["r97", "r98", "r99"]
    kept.add(_event("huge", 60_000))  # larger than the whole budget: not kept, nothing else evicted for it
    assert kept.latest("huge") is None and kept.latest("r99") is not None
    assert kept.bytes == sum(event_bytes(e) for e in kept.recent(1000))


def test_a_body_is_refused_at_the_first_byte_past_the_cap():
    async def chunks(n: int, size: int):
        for _ in range(n):
            yield b"x" * size

    async def read(declared, n, size, limit=16):
        return await read_capped(declared, chunks(n, size), limit)

    assert asyncio.run(read(None, 2, 8)) == b"x" * 16
    with pytest.raises(BodyTooLarge):
        asyncio.run(read(None, 1_000_000, 10))  # stops after two chunks, never reads the rest
    with pytest.raises(BodyTooLarge, match="declared"):
        asyncio.run(read("400000000", 0, 0))


def test_per_minute_allows_a_burst_then_says_how_long_to_wait():
    limit = PerMinute(30)
    assert [limit.allow() for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limit.allow()
    assert 0 < wait <= 2.0


# --- the server -----------------------------------------------------------------------------------

@pytest.fixture()
def http(web_stack):
    with httpx.Client(base_url=web_stack.url, timeout=30) as client:
        yield client


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _healthy(http) -> dict:
    health = http.get("/healthz")
    assert health.status_code == 200
    return health.json()


def _hidden(http) -> int:
    return _healthy(http)["trust"]["hidden"]["answers"]


@pytest.mark.e2e
def test_whole_ledger_scans_never_overlap_however_long_one_takes(monkeypatch):
    """Issue 54: the timeline's chain check reads the whole ledger; one that outlived ``timeline_cache_s`` was
    joined by another scan on every later read. Now a running scan is awaited, and the next starts after it."""
    import threading

    from citestream.config import get_settings
    from citestream.web import timeline
    from citestream.web.settings import WebSettings

    running, most, calls, release = [0], [0], [0], threading.Event()
    lock = threading.Lock()

    def slow_scan(engine) -> dict:
        with lock:
            running[0] += 1
            calls[0] += 1
            most[0] = max(most[0], running[0])
        release.wait(10)  # a ledger that takes longer than the cache time to read
        with lock:
            running[0] -= 1
        return {"ok": True, "rows": calls[0]}

    monkeypatch.setattr(timeline, "chain_status", slow_scan)
    timelines = timeline.Timelines(get_settings(), WebSettings(timeline_cache_s=0.01), None, None)

    async def reads():
        first = [asyncio.create_task(timelines._chain_status()) for _ in range(3)]
        await asyncio.sleep(0.05)  # past the cache time, the first scan still running
        later = [asyncio.create_task(timelines._chain_status()) for _ in range(3)]
        await asyncio.sleep(0.05)
        release.set()
        results = await asyncio.gather(*first, *later)
        await asyncio.sleep(0.02)
        return results, await timelines._chain_status()  # the scan ended long ago: a new one

    results, fresh = asyncio.run(reads())
    assert most[0] == 1 and results == [{"ok": True, "rows": 1}] * 6
    assert fresh == {"ok": True, "rows": 2} and calls[0] == 2


def test_a_forged_answer_is_never_shown_and_the_timeline_marks_it(http, web_stack):
    """Made up, altered after sealing, sealed with another key: the page shows none of them, whatever request id
    they carry, and still shows the real answer."""
    real_q = QuestionEvent(request_id=new_request_id("real"), question="What does lecanemab target?")
    replies = ask_via_kafka(web_stack.settings, [real_q])
    assert real_q.request_id in replies
    real = next(json.loads(m.value) for m in in_thread(read_topic, "answers", settings=web_stack.settings)
                if m.key == real_q.request_id.encode())
    made_up = "Lecanemab cures every form of dementia."
    forged = {new_request_id("forged"): dict(real, answer_text=made_up, mac=None),
              new_request_id("altered"): dict(real, answer_text=made_up)}
    stranger_rid = new_request_id("stranger")
    before = _hidden(http)
    for rid, record in forged.items():
        publish_raw(web_stack.settings, "answers", rid.encode(), json.dumps({**record, "request_id": rid}).encode())
    stranger = RecordSealer(secrets.token_bytes(32)).payload(
        ValidatedAnswer.model_validate({**real, "request_id": stranger_rid, "answer_text": made_up}))
    publish_raw(web_stack.settings, "answers", stranger_rid.encode(), stranger)
    deadline = time.monotonic() + 60
    while _hidden(http) < before + 3 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _hidden(http) >= before + 3
    for rid in (*forged, stranger_rid):
        assert http.get(f"/api/answers/{rid}").status_code == 404, rid
    assert http.get(f"/api/answers/{real_q.request_id}").json()["data"]["answer_text"] == real["answer_text"]
    with http.stream("GET", "/api/events") as stream:  # the snapshot a new browser starts from
        snapshot = next(json.loads(line[6:]) for line in stream.iter_lines() if line.startswith("data: "))
    assert made_up not in json.dumps(snapshot) and snapshot["trust"]["verifying"] is True
    timeline = http.get(f"/api/requests/{stranger_rid}").json()
    [entry] = [r for r in timeline["records"] if r["topic"] == "answers"]
    assert entry["authentic"] is False and "does not match" in entry["not_authentic"]


@pytest.mark.e2e
def test_a_page_that_cannot_read_the_key_shows_nothing_and_says_why_but_not_where(web_stack, tmp_path):
    missing = tmp_path / "no-such-dir" / "records.pub"
    web = WebProcess(tmp_path / "web.log", free_port(28380),
                     {**web_stack.env, "CITESTREAM_RECORD_PUBLIC_KEY_FILE": str(missing),
                      "CITESTREAM_UI_GROUP": f"keyless-{uuid.uuid4().hex[:6]}"})
    try:
        web.wait_ready()
        question = QuestionEvent(request_id=new_request_id("keyless"), question="What does lecanemab target?")
        assert question.request_id in ask_via_kafka(web_stack.settings, [question])
        deadline = time.monotonic() + 30
        while (health := httpx.get(f"{web.url}/healthz", timeout=10).json())["trust"]["hidden"]["answers"] < 1:
            assert time.monotonic() < deadline, "the page never read the answer"
            time.sleep(0.5)
        assert health["trust"]["verifying"] is False and "no record key" in health["trust"]["why_not"]
        assert str(tmp_path) not in json.dumps(health), "/healthz is public: it never says where the key is"
        assert health["trust"]["hidden"]["answers"] >= 1
        assert httpx.get(f"{web.url}/api/answers/{question.request_id}", timeout=10).status_code == 404
    finally:
        web.stop()
    assert not missing.exists(), "the page must never make a key of its own"


@pytest.mark.e2e
def test_an_oversized_question_body_gets_413_unread_and_the_page_stays_up(http, web_stack):
    body = json.dumps({"question": "why " * 5000}).encode()  # 20 kB
    refused = http.post("/api/questions", content=body, headers={"content-type": "application/json"})
    assert refused.status_code == 413 and "too large" in refused.json()["error"]
    deep = http.post("/api/questions", content=b"[" * 5000 + b"]" * 5000, headers={"content-type": "application/json"})
    assert deep.status_code == 400 and "nested deeper" in deep.json()["error"]  # the intake's decoder
    rss_before = _rss_mb(web_stack.pid)
    status = _send_chunked(web_stack.url, total_mb=400)  # no length declared: refused while reading
    assert status.startswith(b"HTTP/1.1 413"), status
    assert _rss_mb(web_stack.pid) - rss_before < 64, "the page held the body in memory"
    assert _healthy(http)["ok"]
    ok = http.post("/api/questions", json={"question": "What does lecanemab target?"})
    assert ok.status_code == 202


def _send_chunked(url: str, total_mb: int) -> bytes:
    """POST up to ``total_mb`` MB as chunked transfer; stop when the server answers or closes; its status line."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /api/questions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        sock.setblocking(False)
        reply = b""
        for _ in range(total_mb * 16):
            with contextlib.suppress(BlockingIOError):
                reply += sock.recv(4096)
            if reply:
                break
            try:
                sock.setblocking(True)
                sock.settimeout(5)
                sock.sendall(chunk)
                sock.setblocking(False)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
        sock.setblocking(True)
        sock.settimeout(10)
        with contextlib.suppress(OSError):
            while b"\r\n" not in reply:
                data = sock.recv(4096)
                if not data:
                    break
                reply += data
    return reply.split(b"\r\n", 1)[0]


@pytest.mark.e2e
def test_event_streams_are_capped_and_a_closed_one_frees_its_slot(web_stack):
    with httpx.Client(base_url=web_stack.url, timeout=httpx.Timeout(10, read=30)) as client, \
            contextlib.ExitStack() as streams:
        opened = [streams.enter_context(client.stream("GET", "/api/events")) for _ in range(MAX_STREAMS)]
        assert all(s.status_code == 200 for s in opened)
        for _ in range(3):
            refused = client.get("/api/events")
            assert refused.status_code == 503 and refused.headers["retry-after"] == "10"
        assert client.get("/healthz").json()["streams"] == {"open": MAX_STREAMS, "max": MAX_STREAMS}
        opened[0].close()
        deadline = time.monotonic() + 10
        while client.get("/healthz").json()["streams"]["open"] == MAX_STREAMS and time.monotonic() < deadline:
            time.sleep(0.2)
        with client.stream("GET", "/api/events") as again:
            assert again.status_code == 200
    with httpx.Client(base_url=web_stack.url, timeout=10) as client:
        deadline = time.monotonic() + 10
        while client.get("/healthz").json()["streams"]["open"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get("/healthz").json()["streams"]["open"] == 0


@pytest.mark.e2e
def test_timeline_reads_are_shared_limited_and_never_from_another_site(http, web_stack):
    rid = new_request_id("tl")
    reads = _healthy(http)["timeline_reads"]
    cross = http.get(f"/api/requests/{rid}", headers={"sec-fetch-site": "cross-site"})
    assert cross.status_code == 403
    foreign = http.get(f"/api/requests/{rid}", headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert _healthy(http)["timeline_reads"] == reads, "a refused read started a consumer"
    time.sleep(PerMinute(30).burst * 2)  # earlier tests' reads given back
    first, second = (http.get(f"/api/requests/{rid}", headers={"sec-fetch-site": "same-origin"}) for _ in range(2))
    assert first.status_code == second.status_code == 200 and first.json() == second.json()
    assert _healthy(http)["timeline_reads"] == reads + 1, "the second GET read Kafka again"
    statuses = [http.get(f"/api/requests/{new_request_id('tl')}").status_code for _ in range(8)]
    assert 429 in statuses, statuses  # distinct ids: past the burst, reads wait their turn
    throttled = http.get(f"/api/requests/{new_request_id('tl')}")
    assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) >= 1
    time.sleep(int(throttled.headers["retry-after"]) + 1)  # leave the next tests a read
    assert _healthy(http)["ok"]


@pytest.mark.e2e
def test_a_deeply_nested_record_gets_a_fate_in_the_timeline_not_a_500(http, web_stack):
    rid = new_request_id("deep")
    publish_raw(web_stack.settings, "questions", rid.encode(), b"[" * 20_000 + b"]" * 20_000)
    response = http.get(f"/api/requests/{rid}")
    while response.status_code == 429:  # the read before this test's may still be in its minute
        time.sleep(int(response.headers["retry-after"]))
        response = http.get(f"/api/requests/{rid}")
    assert response.status_code == 200
    entries = [r for r in response.json()["records"] if r["topic"] == "questions"]
    assert entries and entries[0]["readable"] is False
    assert entries[0]["unreadable"].startswith("NESTING_TOO_DEEP")


def _timeline(http, rid: str) -> dict:
    response = http.get(f"/api/requests/{rid}")
    while response.status_code == 429:  # the page's timeline reads of the minute may be spent
        time.sleep(int(response.headers["retry-after"]))
        response = http.get(f"/api/requests/{rid}")
    assert response.status_code == 200, response.text
    return response.json()


def _sealer(web_stack) -> RecordSealer:
    """The stack's worker's own key: records as a worker seals them."""
    return RecordSealer.from_file(web_stack.settings.record_key_path)


def test_a_sealed_answer_replayed_under_another_key_is_not_that_requests_in_its_timeline(http, web_stack):
    """Issue 54 L2: the timeline matched records by key and checked only the seal, so a worker's answer to request A
    republished under key B showed in B's timeline as "sealed by a worker". Now it says it is A's, not B's."""
    first = QuestionEvent(request_id=new_request_id("orig"), question="What does lecanemab target?")
    assert first.request_id in ask_via_kafka(web_stack.settings, [first])
    value = next(m.value for m in in_thread(read_topic, "answers", settings=web_stack.settings)
                 if m.key == first.request_id.encode())
    other = new_request_id("replayed")
    publish_raw(web_stack.settings, "answers", other.encode(), value)
    [entry] = [r for r in _timeline(http, other)["records"] if r["topic"] == "answers"]
    assert entry["readable"] and entry["authentic"] is False, entry
    assert first.request_id in entry["not_authentic"] and "not this request" in entry["not_authentic"]
    [own] = [r for r in _timeline(http, first.request_id)["records"] if r["topic"] == "answers"]
    assert own["authentic"] is True and own["not_authentic"] is None  # its own request's timeline still trusts it


def test_a_record_naming_a_lone_surrogate_gets_its_reason_in_the_timeline_not_a_500(http, web_stack):
    """Review after issue 54, N1: strict JSON lets a lone surrogate (``"\\ud800"``) through, and a record whose body
    named one as its request_id made the request's timeline a 500 (UTF-8 cannot encode it), for as long as the
    record was in the window. Now the entry says it names another request, the surrogate written as its escape;
    one in any other field or name is shown escaped too."""
    rid = new_request_id("surrogate")
    publish_raw(web_stack.settings, "questions", rid.encode(),
                b'{"request_id": "\\ud800", "question": "x\\udc00", "\\ud801": 1, '
                b'"trace": [{"stage": "\\udbff"}]}')
    [entry] = [r for r in _timeline(http, rid)["records"] if r["topic"] == "questions"]
    assert entry["readable"] is True and entry["foreign"] == "\\ud800", entry
    assert entry["not_authentic"] == "its body names request \\ud800, not this request"
    assert entry["summary"] == {"question": "x\\udc00", "\\ud801": 1}
    assert entry["trace"] == [{"stage": "\\udbff"}] and "\\udbff" in entry["json"]


def test_a_sealed_answer_to_another_question_is_not_shown_for_a_question_the_page_sent(http, web_stack):
    """Issue 54 M4, on the server: a worker's sealed answer carrying the request id of a question the page sent, but
    another question or scope (a publisher's question admitted first under that id), is never kept or sent to a
    browser; it is counted (``unbound``). The genuine answer stays the one shown."""
    sent = http.post("/api/questions", json={"question": "What does lecanemab target?"}).json()
    rid = sent["request_id"]
    deadline = time.monotonic() + 120
    while (shown := http.get(f"/api/answers/{rid}")).status_code == 404 and time.monotonic() < deadline:
        time.sleep(0.5)
    genuine = shown.json()["data"]
    before = _healthy(http)["trust"].get("unbound", 0)
    sealer = _sealer(web_stack)
    for change in ({"question": "Which drug cures every dementia?"}, {"scope": "FDA"}):
        forged = ValidatedAnswer.model_validate({**genuine, **change, "answer_text": "Lecanemab cures dementia."})
        publish_raw(web_stack.settings, "answers", rid.encode(), sealer.payload(forged))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _healthy(http)["trust"].get("unbound", 0) < before + 2 \
            and http.get(f"/api/answers/{rid}").json()["data"] == genuine:
        time.sleep(0.5)
    assert http.get(f"/api/answers/{rid}").json()["data"] == genuine
    assert _healthy(http)["trust"]["unbound"] == before + 2


def _publish_to_partition(settings, topic: str, records: list[tuple[bytes, bytes]], partition: int = 0) -> None:
    """Records in this order on one partition: the page reads them in this order."""
    from aiokafka import AIOKafkaProducer

    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all")
        await producer.start()
        try:
            for key, value in records:
                await producer.send_and_wait(settings.topic(topic), value=value, key=key, partition=partition)
        finally:
            await producer.stop()

    in_thread(send)


def test_stage_keys_that_are_no_request_id_never_reach_an_event_stream(http, web_stack):
    """Issue 54 L4: every key on a stage topic went to every event stream as its request_id, however long. Now only
    a key that is a request id (at most 128 of ``[A-Za-z0-9._:-]``) travels; others are dropped and counted."""
    long_key, odd_key, marker = "k" * 600, "not a request id", new_request_id("key")
    before = _healthy(http).get("stage_keys_dropped", 0)
    seen: list = []
    with http.stream("GET", "/api/events", timeout=httpx.Timeout(5, read=60)) as stream:
        lines = stream.iter_lines()
        next(line for line in lines if line.startswith("data: "))  # the snapshot: the stream is subscribed
        _publish_to_partition(web_stack.settings, "qa.facts",
                              [(long_key.encode(), b"{}"), (odd_key.encode(), b"{}"), (marker.encode(), b"{}")])
        deadline, event = time.monotonic() + 60, None
        for line in lines:
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "stage":
                seen.append(json.loads(line[6:])["request_id"])
                if seen[-1] == marker or time.monotonic() > deadline:
                    break
    assert marker in seen, seen
    assert long_key not in seen and odd_key not in seen
    assert all(rid is None or len(rid) <= 128 for rid in seen)
    assert _healthy(http)["stage_keys_dropped"] == before + 2
