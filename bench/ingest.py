"""Ingest all of ../shared/corpus from scratch, beside the raw embedding throughput of the same chunk texts.

One process, one model, one run, in this order:

1. *parse + chunk only*: every PDF parsed and chunked, no model, no database;
   this gives the exact texts ingestion embeds (section + chunk text, and each document's distinct sentence
   units, whose vectors the relevance model reads at question time).
2. *raw embedding (before)*: those texts in two ``Embedder.embed`` calls, chunks then units (same
   model, same batch size, nothing else running in the process).
3. *ingest (end to end)*: a fresh, migrated database; the corpus ingested by
   the code behind ``citestream ingest`` (the next file parsed and the
   previous document written while the current one embeds; one transaction
   per document: binary COPY, then the server's HNSW/GIN inserts),
   timed around ``ingest_paths``: from listing the files to the last commit.
4. *raw embedding (after)*: step 2 again.

The machine is shared and its load moves by a factor of two within minutes,
so raw throughput is measured on both sides of the ingest and pooled
(2 × texts ÷ both durations): a steady drift in load then weighs on both
figures alike instead of on one only. The spread between the two raw runs is
printed: when it is large, so is the ratio's uncertainty.

Figures: seconds are wall time; pages/s and chunks/s count the PDF pages and
the child chunks (the embedded ones; parents carry no vector); ``cpu s`` is
this process's user + system time (all threads; the Postgres server's work is
not included); ``load`` is the 1-minute load average at the start → end of
the step. *ratio* = ingest chunks/s ÷ pooled raw chunks/s, the share of the
ingest's wall time the model would need on its own; the goal is ≥ 0.85.
*cpu ratio* = mean raw ``cpu s`` ÷ ingest ``cpu s``: the same share counted
in this process's CPU time, which a busy machine disturbs less than wall
time (it leaves out the server's COPY/index work). Peak RSS is this
process's maximum resident set.

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
from citestream.core.text_units import scored_units
from citestream.ingest.runner import ingest_paths
from citestream.store import ChunkStore
from citestream.store.db import make_engine, sqlalchemy_url

from ._support import CORPUS


def _admin_dsn(dsn: str) -> str:
    """The server's ``postgres`` database, ready to connect (the state folder's passfile for a local server)."""
    return get_settings().resolve_dsn(urlunparse(urlparse(dsn)._replace(path="/postgres")))


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


class Step:
    """Wall time, this process's CPU time and the load average around one step."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> Step:
        self.load0, self.cpu0, self.t0 = os.getloadavg()[0], _cpu(), time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds, self.cpu = time.perf_counter() - self.t0, _cpu() - self.cpu0
        self.load1 = os.getloadavg()[0]

    def row(self, pages: int | None, chunks: int) -> str:
        per_page = f"{pages / self.seconds:10.2f}" if pages else f"{'':>10}"
        return (f"{self.name:28}{self.seconds:9.1f}{per_page}{chunks / self.seconds:10.2f}{self.cpu:9.1f}"
                f"   {self.load0:.1f} → {self.load1:.1f}")


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def main() -> None:
    files = list(pdf_paths([CORPUS]))
    embedder = get_embedder()
    embedder.embed(["warm up the model before any clock starts"] * 8)
    rss_before = peak_rss_mb()

    with Step("parse + chunk only") as parse:
        plans = [plan_chunks(from_pdf(f))[0] for f in files]
        texts = [embedding_input(c) for children in plans for c in children]
        units = [u for children in plans for u in dict.fromkeys(u for c in children for u in scored_units(c.text))]
    with Step("raw embedding (before)") as raw_before:
        embedder.embed(texts)
        embedder.embed(units)

    dsn = fresh_database()
    engine = make_engine(dsn)
    try:
        with Step("ingest (end to end)") as ingest:
            summary = ingest_paths([CORPUS], ChunkStore(engine), embedder)
        assert not summary.errors, [f.error for f in summary.errors]
    finally:
        engine.dispose()
        if not os.environ.get("BENCH_KEEP_DB"):
            drop_database(dsn)
    with Step("raw embedding (after)") as raw_after:
        embedder.embed(texts)
        embedder.embed(units)

    chunks, pages = summary.chunks, summary.pages
    assert chunks == len(texts), (chunks, len(texts))
    ingest_cps = chunks / ingest.seconds
    raw_cps = 2 * len(texts) / (raw_before.seconds + raw_after.seconds)
    spread = abs(raw_before.seconds - raw_after.seconds) / min(raw_before.seconds, raw_after.seconds)
    print(f"corpus: {CORPUS} ({len(files)} PDFs, {pages} pages, {chunks} child chunks, "
          f"mean {sum(map(len, texts)) / len(texts):.0f} chars embedded; {len(units)} sentence units)")
    print(f"{'':28}{'seconds':>9}{'pages/s':>10}{'chunks/s':>10}{'cpu s':>9}   load")
    print(parse.row(pages, chunks))
    print(raw_before.row(None, chunks))
    print(ingest.row(pages, chunks))
    print(raw_after.row(None, chunks))
    print(f"raw embedding, pooled: {raw_cps:.2f} chunks/s (the two raw runs differ by {spread:.0%})")
    print(f"ratio ingest/raw chunks/s: {ingest_cps / raw_cps:.3f} (goal >= 0.85)")
    print(f"cpu ratio (mean raw cpu s / ingest cpu s, this process): "
          f"{(raw_before.cpu + raw_after.cpu) / 2 / ingest.cpu:.3f}")
    print(f"peak RSS: {peak_rss_mb():.0f} MB (model loaded: {rss_before:.0f} MB)")


if __name__ == "__main__":
    main()
