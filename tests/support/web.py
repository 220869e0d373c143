"""The web page's test stack: a database of its own with the demo corpus ingested from real PDFs, a worker on
topics of its own, and a `citestream web` process — all real, on the session's Postgres and broker.

The demo corpus goes in as PDF files (not inline text) so that citations have pages to render.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from citestream import infra
from citestream.config import Settings
from citestream.infra.worker import WorkerProcess

from tests.support.browser import WebProcess
from tests.support.common import migrate, own_topics_worker
from tests.support.reliability import free_port

UPLOAD_MAX_MB = 1
MAX_STREAMS = 6  # event streams the stack's page serves at once: small, so the cap is reached in a test
ONE_VISITOR = {"CITESTREAM_UI_REQUESTS_PER_MINUTE": "100000", "CITESTREAM_UI_WRITES_PER_MINUTE": "100000",
               "CITESTREAM_UI_UPLOAD_MB_PER_DAY": "100000", "CITESTREAM_UI_MAX_STREAMS_PER_CLIENT": str(MAX_STREAMS),
               "CITESTREAM_UI_TIMELINE_READS_PER_CLIENT_PER_MINUTE": "100000", "CITESTREAM_UI_PDF_JOBS_PER_CLIENT": "8",
               "CITESTREAM_UI_WRITES_PER_MINUTE_TOTAL": "100000", "CITESTREAM_UI_UPLOADS_PER_MINUTE_TOTAL": "100000"}
"""Every test of the stack's page is one visitor (127.0.0.1): its budgets are the page's own here
(tests/web/test_web_budgets.py holds each visitor to its own on a second page)."""


@dataclass
class WebStack:
    url: str                # the page, e.g. http://127.0.0.1:58180
    settings: Settings      # reaches the stack's topics and database
    database_url: str
    pdf_dir: Path
    shots: Path             # where screenshots go
    pid: int                # the `citestream web` process (its memory is read by the limit tests)
    env: dict[str, str]     # what it was started with (for a second page on the same stack)
    worker: WorkerProcess   # the stack's worker, to check it lives through what the page is sent


def write_pdf(path: Path, title: str, text: str) -> Path:
    from citestream.ops.demo_pdfs import write_pdf as write

    write(path, title, text)
    return path


def ingest_pdfs(database_url: str, paths: list[Path], embedder) -> None:
    from citestream.ingest import from_pdf, ingest_document
    from citestream.store import ChunkStore, make_engine

    engine = make_engine(database_url)
    try:
        for path in paths:
            ingest_document(from_pdf(path), ChunkStore(engine), embedder)
    finally:
        engine.dispose()


def in_thread(coroutine_fn, *args, **kwargs):
    """Run an asyncio client call to completion in a thread of its own: sync Playwright keeps an event loop
    running in the test's thread, where asyncio.run is not allowed."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(coroutine_fn(*args, **kwargs))).result()


def ask_via_kafka(settings: Settings, questions: list, timeout_s: float = 120) -> dict:
    """Publish questions as any other client would (not through the page); the answers by request_id."""
    from citestream.ops.client import publish_and_collect

    replies, _ = in_thread(publish_and_collect, questions, timeout_s=timeout_s, settings=settings)
    return replies


def publish_raw(settings: Settings, topic: str, key: bytes | None, value: bytes) -> None:
    from aiokafka import AIOKafkaProducer

    async def send() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all")
        await producer.start()
        try:
            await producer.send_and_wait(settings.topic(topic), value=value, key=key)
        finally:
            await producer.stop()

    in_thread(send)


@pytest.fixture(scope="package")
def web_stack(settings, database, topics, embedder, smoke_dataset, tmp_path_factory):
    from citestream.ops.demo_pdfs import main as write_demo_pdfs

    name = f"t_web_{uuid.uuid4().hex[:8]}"
    pg = infra.servers(settings)[0]
    pg.ensure_database(name)
    database_url = f"postgresql://postgres@127.0.0.1:{settings.pg_port}/{name}"
    migrate(database_url)
    pdf_dir = tmp_path_factory.mktemp("web-pdfs")
    write_demo_pdfs(str(pdf_dir))
    ingest_pdfs(database_url, sorted(pdf_dir.glob("*.pdf")), embedder)

    shots = Path(os.environ.get("CITESTREAM_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    logs = tmp_path_factory.mktemp("web-logs")
    # metrics off: another module gives the session worker a metrics port through the environment
    env = {"CITESTREAM_DATABASE_URL": database_url, "CITESTREAM_METRICS_PORT": "0"}
    try:
        with own_topics_worker(settings, "web", logs / "worker.log", env) as (worker, stack_settings):
            web_env = {**env, "CITESTREAM_TOPIC_PREFIX": stack_settings.topic_prefix,
                       "CITESTREAM_APP_ID": f"citestream-{stack_settings.topic_prefix.strip('.').replace('.', '-')}",
                       "CITESTREAM_UI_UPLOAD_MAX_MB": str(UPLOAD_MAX_MB),
                       "CITESTREAM_UI_MAX_STREAMS": str(MAX_STREAMS), **ONE_VISITOR}
            web = WebProcess(logs / "web.log", free_port(28180), web_env)
            try:
                web.wait_ready()
                yield WebStack(web.url, stack_settings.model_copy(update={"database_url": database_url}),
                               database_url, pdf_dir, shots, web.proc.pid, web_env, worker)
            finally:
                web.stop()
    finally:
        pg.drop_database(name)
