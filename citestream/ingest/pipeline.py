"""Ingest one document: pages → parent/child chunks → embeddings → one atomic write to Postgres."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..embedding import Embedder
from ..store import ChunkRow, ChunkStore, DocumentRow
from .chunking import child_pieces, group_parents
from .pdf import page_texts


@dataclass
class SourceDocument:
    doc_id: str
    pdf: str
    pages: list[str]
    content_sha256: str
    authority: str = "MIXED"
    title: str = ""
    source: str = ""
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class IngestOutcome:
    doc_id: str
    chunk_ids: list[str]
    pages: int
    changed: bool


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "doc"


def manifest_authorities(folder: Path) -> dict[str, str]:
    manifest = folder / "manifest.json"
    if not manifest.exists():
        return {}
    return {row["file"]: row.get("authority", "MIXED") for row in json.loads(manifest.read_text())}


def from_pdf(path: Path, authority: str | None = None) -> SourceDocument:
    """The file name is the document's identity (a changed file replaces its old chunks); the hash detects change."""
    data = path.read_bytes()
    return SourceDocument(
        doc_id=slug(path.stem), pdf=path.name, pages=page_texts(path),
        content_sha256=hashlib.sha256(data).hexdigest(),
        authority=authority or manifest_authorities(path.parent).get(path.name, "MIXED"),
        title=path.stem, source=str(path),
    )


def from_text(doc_id: str, text: str, title: str = "", source: str = "", metadata: dict | None = None,
              authority: str | None = None) -> SourceDocument:
    return SourceDocument(
        doc_id=doc_id, pdf=doc_id, pages=[text], content_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        authority=authority or "MIXED", title=title, source=source, metadata=metadata or {},
    )


def build_chunks(doc: SourceDocument, embedder: Embedder) -> list[ChunkRow]:
    children = child_pieces(doc.pages)
    vectors = embedder.embed([c.text for c in children])
    rows = [
        ChunkRow(chunk_id=f"{doc.doc_id}-chunk-{i}", kind="child", seq=i, page=c.page, text=c.text,
                 section=c.section, embedding=vectors[i])
        for i, c in enumerate(children)
    ]
    for p, members in enumerate(group_parents(children)):
        parent_id = f"{doc.doc_id}-parent-{p}"
        for i in members:
            rows[i].parent_id = parent_id
        first = children[members[0]]
        rows.append(ChunkRow(chunk_id=parent_id, kind="parent", seq=len(children) + p, page=first.page,
                             section=first.section, text=" ".join(children[i].text for i in members)))
    return rows


def ingest_document(doc: SourceDocument, store: ChunkStore, embedder: Embedder) -> IngestOutcome:
    """Unchanged content is skipped; otherwise the document and its chunks are replaced in one transaction."""
    if store.stored_sha256(doc.doc_id) == doc.content_sha256:
        return IngestOutcome(doc.doc_id, store.chunk_ids(doc.doc_id, kind="child"), len(doc.pages), changed=False)
    rows = build_chunks(doc, embedder)
    if not any(r.kind == "child" for r in rows):
        raise ValueError(f"{doc.pdf}: no extractable text (empty or image-only)")
    store.replace_document(
        DocumentRow(doc_id=doc.doc_id, pdf=doc.pdf, content_sha256=doc.content_sha256, pages=len(doc.pages),
                    authority=doc.authority, title=doc.title, source=doc.source, metadata=doc.metadata),
        rows,
    )
    return IngestOutcome(doc.doc_id, [r.chunk_id for r in rows if r.kind == "child"], len(doc.pages), changed=True)
