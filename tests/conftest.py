"""Fixtures on real servers: the embedded Postgres+pgvector and broker (or Docker ones, CITESTREAM_INFRA=docker).

Tests default to their own database and topic prefix so they never touch the
demo's data; set CITESTREAM_TEST_DATABASE_URL / CITESTREAM_TOPIC_PREFIX to run
several suites side by side on one pair of servers.
"""

from __future__ import annotations

import os
import uuid

import pytest

_PG_PORT = os.environ.get("CITESTREAM_PG_PORT", "55432")
os.environ["CITESTREAM_DATABASE_URL"] = os.environ.get(
    "CITESTREAM_TEST_DATABASE_URL", f"postgresql://postgres@127.0.0.1:{_PG_PORT}/citestream_test")
os.environ.setdefault("CITESTREAM_TOPIC_PREFIX", "test.")
os.environ.setdefault("CITESTREAM_APP_ID", f"citestream-{os.environ['CITESTREAM_TOPIC_PREFIX'].strip('.')}")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("CITESTREAM_TOPIC_RETENTION_HOURS", "1")  # test records need minutes, not days

from citestream import infra  # noqa: E402
from citestream.config import get_settings  # noqa: E402
from citestream.infra.worker import WorkerProcess  # noqa: E402

from tests.support.common import CORPUS, migrate  # noqa: E402
from tests.support.corpus import corpus_settings, prepare_corpus_database  # noqa: E402


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    """Start whatever is not running; stop at the end only what this session started."""
    if os.environ.get("CITESTREAM_INFRA") == "docker":
        from citestream.infra.docker import docker_servers

        with docker_servers():  # exports the containers' URLs into the environment
            get_settings.cache_clear()
            yield get_settings()
        return
    settings = get_settings()
    owner = tmp_path_factory.mktemp("infra") / "owner.json"
    infra.up(settings, owner)
    yield settings
    infra.down(settings, owner)


@pytest.fixture(scope="session")
def settings(servers):
    return get_settings()


@pytest.fixture(scope="session")
def database(settings):
    """The test database, migrated to head."""
    if settings.infra != "docker":
        infra.servers(settings)[0].ensure_database(infra.database_name(settings))
    migrate()
    return settings.owner_dsn  # with the embedded server's passfile: psycopg.connect works on it as it is


@pytest.fixture()
def empty_database(settings):
    """A fresh database of the test's own, dropped afterwards: for schemas built from nothing and private ledgers."""
    pg = infra.servers(settings)[0]
    name = f"t_{uuid.uuid4().hex[:8]}"
    pg.ensure_database(name)
    yield settings.resolve_dsn(f"postgresql://postgres@127.0.0.1:{settings.pg_port}/{name}")
    pg.drop_database(name)


@pytest.fixture()
def migrated_database(empty_database):
    """``empty_database`` migrated to head."""
    migrate(empty_database)
    return empty_database


@pytest.fixture(scope="session")
def relevance():
    """The relevance model the package ships (the real one, never a stand-in), configured as the product runs it."""
    from citestream.config import get_settings
    from citestream.relevance import relevance_model_for

    return relevance_model_for(get_settings())


@pytest.fixture(scope="session")
def claim_relevance():
    """The claim judge the package ships, asked as the product asks it (its own cross-encoder, blend and prefix)."""
    from citestream.config import get_settings
    from citestream.relevance import ClaimRelevance, relevance_model_for

    return ClaimRelevance(relevance_model_for(get_settings(), claims=True))


def pytest_collection_modifyitems(items):
    """Tests on the corpus database run last, so its background ingest (``corpus_ingest``) overlaps the rest."""
    items.sort(key=lambda item: "corpus" in getattr(item, "fixturenames", ()))  # stable: order kept otherwise


@pytest.fixture(scope="session", autouse=True)
def corpus_ingest(request):
    """When a selected test needs ``corpus``, its ingest (~5 min on 2 cores) starts with the session, niced, in
    the background: the other tests mostly wait on the broker and Postgres, so the two overlap."""
    from concurrent.futures import ThreadPoolExecutor

    if not CORPUS.is_dir() or not any("corpus" in item.fixturenames for item in request.session.items):
        yield None
        return
    s = corpus_settings(request.getfixturevalue("settings"))
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield s, pool.submit(prepare_corpus_database, s, CORPUS, nice=10)


@pytest.fixture(scope="session")
def corpus(corpus_ingest):
    """Settings of a database and topic prefix holding only ../shared/corpus, ingested once per session.

    The corpus parity suite and the claims suites share it, so the corpus is embedded once.
    """
    if corpus_ingest is None:
        pytest.skip("../shared/corpus is not present")
    s, ingest = corpus_ingest
    ingest.result()  # raises what the ingest raised
    return s


@pytest.fixture(scope="session")
def engine(database):
    from citestream.store import engine_for

    return engine_for(database)


@pytest.fixture(scope="session")
def topics(settings):
    from citestream.topics import create_topics

    create_topics(settings.bootstrap_servers, settings.topic_prefix, retention_hours=settings.topic_retention_hours)
    return settings.topic_prefix


@pytest.fixture(scope="session")
def embedder():
    from citestream.embedding import get_embedder

    return get_embedder()


@pytest.fixture(scope="session")
def token_counter():
    from citestream.embedding import get_token_counter

    return get_token_counter()


@pytest.fixture(scope="session")
def smoke_dataset():
    from citestream.ops.demo_pdfs import smoke_dataset

    return smoke_dataset()


@pytest.fixture(scope="session")
def smoke_ingested(engine, embedder, smoke_dataset):
    """The three smoke documents of rag-loop-acceptance §2, ingested as inline text."""
    from citestream.ingest import from_text, ingest_document
    from citestream.store import ChunkStore

    store = ChunkStore(engine)
    for doc in smoke_dataset["documents"]:
        ingest_document(from_text(doc["docId"], doc["text"], doc["title"], doc["source"], doc["metadata"]),
                        store, embedder)
    return store


@pytest.fixture(scope="session")
def worker(topics, database, smoke_ingested, tmp_path_factory):
    """One worker process for the session's end-to-end tests; it may ingest files under pytest's temporary folder."""
    proc = WorkerProcess(tmp_path_factory.mktemp("worker") / "worker.log",
                         env={"CITESTREAM_INGEST_ROOTS": str(tmp_path_factory.getbasetemp())})
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()
