"""Ingest many PDFs from the command line: keep the embedding model busy, count everything.

Three stages overlap, one document each: a thread parses the next file, the
calling thread embeds the current one, and another thread writes the previous
one (its one transaction: COPY, then the server's HNSW and GIN inserts, about
6 s for the whole corpus, during which the model used to wait). Writes stay
one at a time and in order, and a document's rows are complete before its
transaction opens, so the guarantees of ``pipeline`` hold unchanged.
``bench/ingest.py`` compares the result with raw embedding throughput.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..embedding import Embedder
from ..store import ChunkStore
from ..store.chunks import DocumentOwned
from . import DOCUMENT_ERRORS, pdf_paths
from .pipeline import (
    DEFAULT_MAX_PDF_BYTES, EmbeddingFailed, SourceDocument, build_chunks, from_pdf, is_unchanged, plan_chunks,
    unchanged_outcome, write_document,
)


@dataclass
class FileResult:
    path: Path
    doc_id: str | None = None
    pages: int = 0
    chunks: int = 0
    state: str = "ingested"  # ingested | unchanged | relabelled | new | changed (dry run) | error
    authority: str = "MIXED"
    authority_source: str = ""  # where the issuer came from (``issuer.IssuerDecision.source``)
    error: str | None = None
    issuer: str = ""
    evidence: str = ""  # the words the issuer was read from
    warnings: tuple[str, ...] = ()


@dataclass
class IngestSummary:
    files: list[FileResult] = field(default_factory=list)
    seconds: float = 0.0
    index_version: str = ""

    def count(self, state: str) -> int:
        return sum(f.state == state for f in self.files)

    @property
    def pages(self) -> int:
        return sum(f.pages for f in self.files if f.state != "error")

    @property
    def chunks(self) -> int:
        return sum(f.chunks for f in self.files if f.state != "error")

    @property
    def errors(self) -> list[FileResult]:
        return [f for f in self.files if f.state == "error"]


def _parsed(paths: list[Path], load: Callable[[Path], SourceDocument]) -> Iterator[tuple[Path, Future]]:
    """Each path with its parse running one file ahead of the consumer."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pdf-parse") as pool:
        pending = [(p, pool.submit(load, p)) for p in paths[:1]]
        for i in range(len(paths)):
            if i + 1 < len(paths):
                pending.append((paths[i + 1], pool.submit(load, paths[i + 1])))
            yield pending.pop(0)


class _Writes:
    """At most one document's transaction in flight on a writer thread; results are reported in input order."""

    def __init__(self, pool: ThreadPoolExecutor, store: ChunkStore, report: Callable[[FileResult], None]):
        self.pool, self.store, self.report = pool, store, report
        self.pending: tuple[FileResult, str, Future] | None = None

    def submit(self, result: FileResult, doc: SourceDocument, rows: list) -> None:
        self.settle()
        self.pending = (result, doc.doc_id, self.pool.submit(write_document, doc, rows, self.store))

    def settle(self, doc_id: str | None = None) -> None:
        """Wait for the write in flight (only if it is ``doc_id``'s, when given) and report it; errors propagate."""
        if self.pending is None or doc_id not in (None, self.pending[1]):
            return
        result, _, future = self.pending
        self.pending = None
        try:
            result.chunks, result.state = len(future.result().chunk_ids), "ingested"
        except DocumentOwned as exc:  # another origin took the id between the check and the write
            result.state, result.error = "error", str(exc)
        self.report(result)


def ingest_paths(paths: list[str | Path], store: ChunkStore, embedder: Embedder | None, authority: str | None = None,
                 dry_run: bool = False, on_file: Callable[[FileResult], None] | None = None,
                 max_bytes: int = DEFAULT_MAX_PDF_BYTES, issuer: str | None = None,
                 use_manifest: bool = True) -> IngestSummary:
    """Ingest (or, with ``dry_run``, only plan) every PDF; one document's failure never stops the others.

    The operator's own files, so no ingest roots; each file is still read within ``max_bytes`` and only if it
    is a regular file (a ``*.pdf`` symlink to a device or FIFO is an error, not a hang). ``authority`` and
    ``issuer`` hold for every file; ``use_manifest=False`` reads every issuer from the documents themselves.

    An embedding failure does stop the run: it is not the document's fault and the next one would fail too.
    A database failure propagates (after the write in flight, if any, has finished).
    """
    files = list(pdf_paths(paths))
    summary = IngestSummary()
    started = time.perf_counter()

    def report(result: FileResult) -> None:
        summary.files.append(result)
        if on_file:
            on_file(result)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunk-write") as pool:
        writes = _Writes(pool, store, report)
        load = partial(_load, authority=authority, issuer=issuer, max_bytes=max_bytes, use_manifest=use_manifest)
        for path, future in _parsed(files, load):
            result, rows, stop = FileResult(path), None, False
            try:
                doc: SourceDocument = future.result()
                result.doc_id, result.pages = doc.doc_id, len(doc.pages)
                result.authority, result.authority_source = doc.authority, doc.authority_source
                result.issuer = doc.issuer
                if doc.decision is not None:
                    result.evidence, result.warnings = doc.decision.evidence, tuple(doc.decision.warnings())
                if dry_run:
                    _plan(result, doc, store)
                else:
                    writes.settle(doc.doc_id)  # the same docId twice in one run: see the first one's write
                    outcome = unchanged_outcome(doc, store)
                    if outcome:
                        result.chunks = len(outcome.chunk_ids)
                        result.state = "relabelled" if outcome.changed else "unchanged"
                    else:
                        assert embedder is not None  # None only for a dry run (cli/ingest.py passes it so)
                        rows = build_chunks(doc, embedder)  # the previous document's write runs meanwhile
            except DOCUMENT_ERRORS as exc:
                result.state, result.error = "error", str(exc)
            except EmbeddingFailed as exc:
                result.state, result.error, stop = "error", str(exc), True
            if rows is not None:
                writes.submit(result, doc, rows)
            else:
                writes.settle()
                report(result)
            if stop:
                break
        writes.settle()
    if summary.count("ingested") or summary.count("relabelled"):
        store.refresh_statistics()
    summary.seconds = time.perf_counter() - started
    summary.index_version = store.index_version()
    return summary


def _load(path: Path, authority: str | None, issuer: str | None, max_bytes: int, use_manifest: bool) -> SourceDocument:
    return from_pdf(path, authority, None, max_bytes, issuer=issuer, use_manifest=use_manifest)


def _plan(result: FileResult, doc: SourceDocument, store: ChunkStore) -> None:
    """Dry run: what ingesting ``doc`` would do, written into ``result``."""
    unchanged = is_unchanged(doc, store)
    result.state = "unchanged" if unchanged else ("changed" if store.stored_state(doc.doc_id) else "new")
    result.chunks = len(store.chunk_ids(doc.doc_id, "child")) if unchanged else len(plan_chunks(doc)[0])
