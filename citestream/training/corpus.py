"""The corpus as training material: each PDF's child chunks (the ingest parser's own) and their sentence units."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..ingest.pipeline import from_pdf, plan_chunks
from ..core.text_units import file_name_words, sentence_units, words

_DOT_LEADER = re.compile(r"(?:\.\s?){5,}")
_CONTACT = re.compile(r"https?://|www\.|@[\w-]+\.\w|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b")


@dataclass(frozen=True)
class CorpusChunk:
    pdf: str
    authority: str
    page: int
    section: str
    index: int               # position in its document
    text: str
    units: tuple[str, ...] = field(default=())


def load_corpus(folder: Path) -> list[CorpusChunk]:
    """Every child chunk of every PDF in ``folder``, in file order (deterministic)."""
    out: list[CorpusChunk] = []
    for path in sorted(Path(folder).glob("*.pdf")):
        doc = from_pdf(path)
        pieces, _ = plan_chunks(doc)
        for i, piece in enumerate(pieces):
            out.append(CorpusChunk(doc.pdf, doc.authority, piece.page, piece.section or "", i, piece.text,
                                   tuple(sentence_units(piece.text))))
    return out


ChunkIndex = dict[tuple[str, int], CorpusChunk]


def by_position(chunks: Sequence[CorpusChunk]) -> ChunkIndex:
    """Chunks by (pdf, position in its document): how question rows name the chunk they were written about."""
    return {(c.pdf, c.index): c for c in chunks}


def written_about(row: dict, chunks: ChunkIndex) -> tuple[CorpusChunk, str] | None:
    """The chunk and the sentence unit a question row (``pdf``, ``chunk``, ``unit``) was written about; None when
    the corpus as parsed now has no such unit."""
    chunk = chunks.get((row["pdf"], row["chunk"]))
    if chunk is None or row["unit"] >= len(chunk.units):
        return None
    return chunk, chunk.units[row["unit"]]


def document_title(pdf: str) -> str:
    return file_name_words(pdf)


def informative(unit: str, min_words: int = 8, max_words: int = 70) -> bool:
    """A unit worth asking about: a real sentence, not a table-of-contents line, a contact line or a number run."""
    tokens = words(unit)
    if not min_words <= len(tokens) <= max_words or _DOT_LEADER.search(unit) or _CONTACT.search(unit):
        return False
    return sum(t.replace(".", "").isdigit() for t in tokens) / len(tokens) < 0.3
