"""Ingest one document: pages → blocks → parent/child chunks → embeddings → one atomic write to Postgres.

Besides each child's own vector, the vectors of its sentence units (the texts the relevance model scores) are
computed here and kept (``sentence_vectors``), so questions never embed a corpus sentence.

Everything that can fail (parsing, embedding) happens before the transaction
opens, and the transaction replaces the document's old chunks with the new
ones, so readers see the old document or the new one, never a mix, and a
failure leaves the index as it was.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..config import get_settings
from ..core.hashing import sha256_hex
from ..embedding import Embedder, get_relevance_embedder, relevance_embedder_name
from ..store import ChunkRow, ChunkStore, DocumentRow
from ..store.chunks import CLI, INLINE, UPLOAD, check_owner
from ..core.text_units import scored_units
from .issuer import IssuerDecision, decide_issuer, manifest_authorities
from .chunking import Piece, child_pieces_from_blocks, group_parents
from .layout import Block, extract_blocks
from .paths import ingest_roots, origin_of, read_capped
from .pdf import read_pdf
from .correct import CORRECTED, corrected
from .title import read_title

DEFAULT_MAX_PDF_BYTES = 64 * 1024 * 1024

PIPELINE_VERSION = "ingest-17"
"""Bump when parsing, chunking or the units read from a chunk change (their vectors are stored), so unchanged files
are re-chunked once (stored in documents.metadata, with the relevance embedder that computed the sentence vectors:
another one re-ingests too, see ``pipeline_version``). ingest-10: a heading line glued to a sentence is cut off;
ingest-11: a lead-in and its list are one unit; ingest-12: a numbered heading is cut off though the splitter took
its number, no sentence ends inside a bracket or quotation it opened, and a space drawn inside a ligature is dropped;
ingest-13: a line that opens in lower case is never a heading (it went on from the sentence before it); ingest-14: a
symbol font's bullets open list items, a lead-in whose items are sentences stands alone, a numbered paragraph opens a
unit after one with no full stop, a list marker after a word is left out, and a word cut at its hyphen gets its
acronym back from the next block; ingest-15: a one-column page drawn out of order is read top to bottom, a page's
outermost running header or page number is dropped wherever it stands, and a lead-in a page cut goes to its items;
ingest-16: a line shaped as a heading, in any case, is cut off the sentence under it, and a run-in heading's line
that ends short ends its block; ingest-17: a sentence a page turn cut goes on when the next page opens with a bracket
around words ("(bio-batch) and ...")."""
PIPELINE_KEY = "_ingest_pipeline"
ISSUER_KEY = "_issuer"
"""In documents.metadata: where the issuer came from, the words it was read from, and what the document itself reads
as (the page shows them; a manifest that contradicts the document is reported)."""


def pipeline_version() -> str:
    """What a stored document was built with: this pipeline and the embedder of its sentence vectors."""
    return f"{PIPELINE_VERSION}/{relevance_embedder_name()}"


class EmptyDocument(ValueError):
    """A document with no extractable text (empty, or scanned images without a text layer)."""


class EmbeddingFailed(RuntimeError):
    """The embedding backend failed; nothing of the document was written."""


@dataclass
class SourceDocument:
    doc_id: str
    pdf: str
    pages: list[str]  # each physical page's own text (index 0 = page 1)
    content_sha256: str
    authority: str = "MIXED"
    title: str = ""
    source: str = ""
    metadata: dict = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    authority_source: str = "given"  # where the issuer, and so the scope, came from (``issuer.IssuerDecision``)
    origin: str = CLI  # who owns it: only the same origin replaces it (store.chunks.may_replace)
    issuer: str = ""
    decision: IssuerDecision | None = None

    def labels(self) -> dict:
        """What documents.metadata keeps of the issuer decision."""
        d = self.decision
        if d is None:
            return {ISSUER_KEY: {"source": self.authority_source}}
        return {ISSUER_KEY: {"source": d.source, "evidence": d.evidence, "also": list(d.also),
                             "read": d.read.issuer, "read_from": d.read.source, "read_evidence": d.read.evidence}}


@dataclass(frozen=True)
class IngestOutcome:
    doc_id: str
    chunk_ids: list[str]
    pages: int
    changed: bool
    authority: str = "MIXED"
    authority_source: str = "given"
    origin: str = CLI
    issuer: str = ""
    evidence: str = ""
    warnings: tuple[str, ...] = ()


def outcome_of(doc: SourceDocument, chunk_ids: list[str], changed: bool) -> IngestOutcome:
    return IngestOutcome(doc.doc_id, chunk_ids, len(doc.pages), changed, doc.authority, doc.authority_source,
                         doc.origin, doc.issuer, doc.decision.evidence if doc.decision else "",
                         tuple(doc.decision.warnings()) if doc.decision else ())


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "doc"


def doc_id_for(path: Path, origin: str = CLI) -> str:
    """A PDF's identity is its file name, so a changed file replaces its old chunks (the hash detects the change);
    an upload's name lives in a namespace of its own (``upload:<name>``), so it can never name another's document."""
    return f"{UPLOAD}:{slug(path.stem)}" if origin == UPLOAD else slug(path.stem)


def from_pdf(path: Path, authority: str | None = None, doc_id: str | None = None,
             max_bytes: int = DEFAULT_MAX_PDF_BYTES, roots: list[Path] | None = None,
             claimed: str | None = None, *, issuer: str | None = None, claimed_issuer: str | None = None,
             use_manifest: bool = True) -> SourceDocument:
    """Parse one PDF, read once and within ``max_bytes`` (and, given ``roots``, only from inside them).

    ``authority`` and ``issuer`` are the operator's (the command line); ``claimed`` and ``claimed_issuer`` a
    record's, which count below the operator's manifest. Otherwise the document's first pages, metadata and file
    name are read for its issuer (``issuer.decide_issuer``). An upload's scope is the operator's or MIXED: neither a
    record nor the uploaded text can make it FDA guidance; its issuer is read, or the uploader's correction.
    """
    data = read_capped(path, max_bytes, roots)
    pages, info = read_pdf(path, data)
    settings = get_settings()
    origin = origin_of(path, ingest_roots(settings) if roots is None else roots, settings.uploads_dir)
    upload = origin == UPLOAD
    decision = decide_issuer(path, [p.text for p in pages[:2]], info, given_issuer=issuer, given_authority=authority,
                             claimed_issuer=claimed_issuer, claimed_authority=None if upload else claimed,
                             upload=upload, use_manifest=use_manifest)
    blocks = extract_blocks(pages)
    return SourceDocument(
        doc_id=doc_id or doc_id_for(path, origin), pdf=path.name, pages=[p.text for p in pages],
        content_sha256=hashlib.sha256(data).hexdigest(), authority=decision.authority,
        title=read_title(info, blocks, path.stem), source=str(path.resolve()), blocks=blocks,
        authority_source=decision.source, origin=origin, issuer=decision.issuer, decision=decision,
    )


def from_text(doc_id: str, text: str, title: str = "", source: str = "", metadata: dict | None = None,
              authority: str | None = None) -> SourceDocument:
    """An inline document is one page; its title is its section. Its ``source`` is what the sender says it is, kept
    in its metadata: no file is behind it (the page shows no image of it). Keys starting with "_" are the system's
    (the issuer decision, its corrections' history, the pipeline version): a sender's are dropped."""
    given = {k: v for k, v in (metadata or {}).items() if not k.startswith("_")}
    return SourceDocument(
        doc_id=doc_id, pdf=doc_id, pages=[text], content_sha256=sha256_hex(text),
        authority=authority or "MIXED", title=title,
        metadata={**given, **({"source": source} if source else {})},
        blocks=[Block(1, text.strip(), "text", title or None)] if text.strip() else [],
        authority_source="given" if authority else "unknown", origin=INLINE,
        issuer=authority if authority and authority != "MIXED" else "",
    )


def embedding_input(piece: Piece) -> str:
    """What a child's vector is computed from: its section heading gives short chunks their context."""
    if piece.section and not piece.text.startswith(piece.section):
        return f"{piece.section}\n{piece.text}"
    return piece.text


def plan_chunks(doc: SourceDocument) -> tuple[list[Piece], list[list[int]]]:
    """Children and, per parent, its children's indexes. No model needed (dry runs use this)."""
    children = child_pieces_from_blocks(doc.blocks)
    return children, group_parents(children)


def build_chunks(doc: SourceDocument, embedder: Embedder, sentence_embedder: Embedder | None = None) -> list[ChunkRow]:
    """Children embedded by ``embedder`` (retrieval's), their scored sentence units by the relevance blend's
    embedder (``embedding.get_relevance_embedder``, unless given), then the parents."""
    children, parents = plan_chunks(doc)
    if not children:
        raise EmptyDocument(f"{doc.pdf}: no extractable text (empty, or image-only without a text layer)")
    units = [scored_units(c.text) for c in children]
    unique_units = list(dict.fromkeys(u for group in units for u in group))
    try:
        vectors = embedder.embed([embedding_input(c) for c in children])
        unit_vectors = dict(zip(unique_units, (sentence_embedder or get_relevance_embedder()).embed(unique_units)))
    except Exception as exc:  # any backend failure: report it, write nothing
        raise EmbeddingFailed(f"{doc.pdf}: embedding failed: {type(exc).__name__}: {exc}") from exc
    finite = all(np.isfinite(np.asarray(v, dtype=np.float32)).all() for v in (vectors, *unit_vectors.values()))
    if len(vectors) != len(children) or len(unit_vectors) != len(unique_units) or not finite:
        raise EmbeddingFailed(f"{doc.pdf}: embedding backend returned {len(vectors)} vectors for {len(children)} "
                              "chunks or non-finite values")
    rows = [
        ChunkRow(chunk_id=f"{doc.doc_id}-chunk-{i}", kind="child", seq=i, page=c.page, text=c.text,
                 section=c.section, embedding=vectors[i],
                 sentence_vectors={u: unit_vectors[u] for u in units[i]})
        for i, c in enumerate(children)
    ]
    for p, members in enumerate(parents):
        parent_id = f"{doc.doc_id}-parent-{p}"
        for i in members:
            rows[i].parent_id = parent_id
        first = children[members[0]]
        rows.append(ChunkRow(chunk_id=parent_id, kind="parent", seq=len(children) + p, page=first.page,
                             section=first.section, text="\n".join(children[i].text for i in members)))
    return rows


def _stored(doc: SourceDocument, store: ChunkStore) -> tuple[str, str, str | None, str, str] | None:
    """The stored state of ``doc``'s id when its content and pipeline are ``doc``'s (None when absent or built from
    other bytes or by another pipeline). ``DocumentOwned`` when another origin owns the id: found before anything
    is embedded."""
    stored = store.stored_state(doc.doc_id)
    if stored is None:
        return None
    check_owner(doc.doc_id, stored[3], doc.origin)
    return stored if (stored[0], stored[2]) == (doc.content_sha256, pipeline_version()) else None


_EXPLICIT = ("given", "manifest", "uploader")
"""Issuer sources that are someone's word about this ingest; any other is the document read again."""


def _keeps_correction(doc: SourceDocument, store: ChunkStore) -> bool:
    """An operator corrected the stored document's issuer (``ingest.correct``) and this ingest only read the document
    again: the correction stays."""
    if doc.authority_source in _EXPLICIT:
        return False
    labels = store.labels(doc.doc_id)
    return labels is not None and corrected(labels[2])


def is_unchanged(doc: SourceDocument, store: ChunkStore) -> bool:
    stored = _stored(doc, store)
    return stored is not None and ((stored[1], stored[4]) == (doc.authority, doc.issuer)
                                   or _keeps_correction(doc, store))


def unchanged_outcome(doc: SourceDocument, store: ChunkStore) -> IngestOutcome | None:
    """The outcome without building anything, when the stored document has ``doc``'s content and pipeline: unchanged
    (``changed`` False), or only its issuer or scope changed, which the document and its chunks take in place
    (``ChunkStore.relabel``: nothing is embedded again). None when it must be built. A document stored before
    origins were kept is claimed by this one's origin."""
    stored = _stored(doc, store)
    if stored is None:
        return None
    if stored[3] != doc.origin:
        store.claim(doc.doc_id, doc.origin)
    if (stored[1], stored[4]) != (doc.authority, doc.issuer) and _keeps_correction(doc, store):
        doc = replace(doc, authority=stored[1], issuer=stored[4], authority_source=CORRECTED, decision=None)
    relabel = (stored[1], stored[4]) != (doc.authority, doc.issuer)
    if relabel:
        store.relabel(doc.doc_id, doc.authority, doc.issuer,
                      {**doc.metadata, **doc.labels(), PIPELINE_KEY: pipeline_version()})
    return outcome_of(doc, store.chunk_ids(doc.doc_id, kind="child"), relabel)


def write_document(doc: SourceDocument, rows: list[ChunkRow], store: ChunkStore) -> IngestOutcome:
    """Replace the document and its chunks in one transaction (the rows are fully embedded already)."""
    store.replace_document(
        DocumentRow(doc_id=doc.doc_id, pdf=doc.pdf, content_sha256=doc.content_sha256, pages=len(doc.pages),
                    authority=doc.authority, title=doc.title, source=doc.source,
                    metadata={**doc.metadata, **doc.labels(), PIPELINE_KEY: pipeline_version()}, origin=doc.origin,
                    issuer=doc.issuer),
        rows,
    )
    return outcome_of(doc, [r.chunk_id for r in rows if r.kind == "child"], True)


def ingest_document(doc: SourceDocument, store: ChunkStore, embedder: Embedder) -> IngestOutcome:
    """Unchanged content is skipped; otherwise the document and its chunks are replaced in one transaction."""
    return unchanged_outcome(doc, store) or write_document(doc, build_chunks(doc, embedder), store)


__all__ = ["EmbeddingFailed", "EmptyDocument", "IngestOutcome", "IssuerDecision", "PIPELINE_VERSION", "SourceDocument",
           "build_chunks", "doc_id_for", "embedding_input", "from_pdf", "from_text", "ingest_document",
           "is_unchanged", "manifest_authorities", "plan_chunks", "slug", "unchanged_outcome",
           "write_document"]
