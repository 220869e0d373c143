"""Ingest many PDFs from the command line: parse the next file while the current one embeds, count everything.

Parsing (pdfium, ctypes, GIL released) runs one document ahead in a thread, so
on two cores the embedding model rarely waits for it: ingestion throughput
stays close to raw embedding throughput (``bench/ingest.py`` measures both).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..embedding import Embedder
from ..store import ChunkStore
from . import DOCUMENT_ERRORS, pdf_paths
from .pipeline import EmbeddingFailed, SourceDocument, from_pdf, ingest_document, is_unchanged, plan_chunks


@dataclass
class FileResult:
    path: Path
    doc_id: str | None = None
    pages: int = 0
    chunks: int = 0
    state: str = "ingested"  # ingested | unchanged | new | changed (dry run) | error
    authority: str = "MIXED"
    authority_source: str = ""
    error: str | None = None


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

    @property
    def unknown_authority(self) -> list[FileResult]:
        return [f for f in self.files if f.authority_source == "unknown" and f.state != "error"]


def _parsed(paths: list[Path], authority: str | None) -> Iterator[tuple[Path, Future]]:
    """Each path with its parse running one file ahead of the consumer."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pdf-parse") as pool:
        pending = [(p, pool.submit(from_pdf, p, authority)) for p in paths[:1]]
        for i, path in enumerate(paths):
            if i + 1 < len(paths):
                pending.append((paths[i + 1], pool.submit(from_pdf, paths[i + 1], authority)))
            yield pending.pop(0)


def ingest_paths(paths: list[str | Path], store: ChunkStore, embedder: Embedder | None, authority: str | None = None,
                 dry_run: bool = False, on_file: Callable[[FileResult], None] | None = None) -> IngestSummary:
    """Ingest (or, with ``dry_run``, only plan) every PDF; one document's failure never stops the others.

    An embedding failure does stop the run: it is not the document's fault and the next one would fail too.
    """
    files = list(pdf_paths(paths))
    summary = IngestSummary()
    started = time.perf_counter()
    for path, future in _parsed(files, authority):
        result = FileResult(path)
        try:
            doc: SourceDocument = future.result()
            result.doc_id, result.pages = doc.doc_id, len(doc.pages)
            result.authority, result.authority_source = doc.authority, doc.authority_source
            if dry_run:
                unchanged = is_unchanged(doc, store)
                result.state = "unchanged" if unchanged else ("changed" if store.stored_state(doc.doc_id) else "new")
                result.chunks = len(store.chunk_ids(doc.doc_id, "child")) if unchanged else len(plan_chunks(doc)[0])
            else:
                outcome = ingest_document(doc, store, embedder)
                result.chunks = len(outcome.chunk_ids)
                result.state = "ingested" if outcome.changed else "unchanged"
        except DOCUMENT_ERRORS as exc:
            result.state, result.error = "error", str(exc)
        except EmbeddingFailed as exc:
            result.state, result.error = "error", str(exc)
            summary.files.append(result)
            if on_file:
                on_file(result)
            break
        summary.files.append(result)
        if on_file:
            on_file(result)
    summary.seconds = time.perf_counter() - started
    summary.index_version = store.index_version()
    return summary
