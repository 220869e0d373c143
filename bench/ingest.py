"""Ingest all of ../shared/corpus from scratch, beside the raw embedding throughput of the same chunk texts.

One process, one run: a fresh database is created (and dropped after), the
corpus is ingested through the same code as ``citestream ingest`` (parse one
file ahead, chunk, embed, binary COPY, one transaction per document), then the
very texts that were embedded are embedded again with nothing else around.
The ratio ingest chunks/s ÷ raw chunks/s is the share of time that is
embedding; the goal is ≥ 0.85.

    python -m bench.ingest            # CITESTREAM_CORPUS overrides the folder
"""

from __future__ import annotations

import os
import resource
import time
import uuid
from urllib.parse import urlparse, urlunparse

import psycopg
from alembic import command
from alembic.config import Config

from citestream.config import PROJECT_ROOT, get_settings
from citestream.embedding import get_embedder
from citestream.ingest import pdf_paths
from citestream.ingest.pipeline import embedding_input, from_pdf, plan_chunks
from citestream.ingest.runner import ingest_paths
from citestream.store import ChunkStore
from citestream.store.db import make_engine, sqlalchemy_url

from ._support import CORPUS


def _admin_dsn(dsn: str) -> str:
    return urlunparse(urlparse(dsn)._replace(path="/postgres"))


def fresh_database() -> str:
    """A new, migrated database on the configured server; returns its DSN."""
    base = get_settings().database_url
    name = f"bench_ingest_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(_admin_dsn(base), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    dsn = urlunparse(urlparse(base)._replace(path=f"/{name}"))
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(dsn))
    command.upgrade(config, "head")
    return dsn


def drop_database(dsn: str) -> None:
    with psycopg.connect(_admin_dsn(dsn), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{urlparse(dsn).path.lstrip("/")}" WITH (FORCE)')


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    files = list(pdf_paths([CORPUS]))
    embedder = get_embedder()
    embedder.embed(["warm up the model before any clock starts"] * 8)
    rss_before = peak_rss_mb()

    t0 = time.perf_counter()
    texts = [embedding_input(c) for f in files for c in plan_chunks(from_pdf(f))[0]]
    parse_s = time.perf_counter() - t0

    dsn = fresh_database()
    engine = make_engine(dsn)
    try:
        summary = ingest_paths([CORPUS], ChunkStore(engine), embedder)
        assert not summary.errors, [f.error for f in summary.errors]
        t0 = time.perf_counter()
        embedder.embed(texts)
        raw_s = time.perf_counter() - t0
    finally:
        engine.dispose()
        if not os.environ.get("BENCH_KEEP_DB"):
            drop_database(dsn)

    chunks, pages = summary.chunks, summary.pages
    assert chunks == len(texts), (chunks, len(texts))
    ingest_cps, raw_cps = chunks / summary.seconds, len(texts) / raw_s
    print(f"corpus: {CORPUS} ({len(files)} PDFs, {pages} pages, {chunks} child chunks, "
          f"mean {sum(map(len, texts)) / len(texts):.0f} chars embedded)")
    print(f"{'':28}{'seconds':>9}{'pages/s':>10}{'chunks/s':>10}")
    print(f"{'parse + chunk only':28}{parse_s:9.1f}{pages / parse_s:10.1f}{chunks / parse_s:10.1f}")
    print(f"{'ingest (end to end)':28}{summary.seconds:9.1f}{pages / summary.seconds:10.2f}{ingest_cps:10.2f}")
    print(f"{'raw embedding, same texts':28}{raw_s:9.1f}{'':>10}{raw_cps:10.2f}")
    print(f"ratio ingest/raw chunks/s: {ingest_cps / raw_cps:.3f} (goal >= 0.85)")
    print(f"peak RSS: {peak_rss_mb():.0f} MB (model loaded: {rss_before:.0f} MB)")


if __name__ == "__main__":
    main()
