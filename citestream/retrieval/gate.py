"""The similarity floor and the fallback with its acceptance gate (qa-contract-v1 §1)."""

from __future__ import annotations

from collections.abc import Sequence

from ..store.search import ChunkHit
from ..text import content_terms, file_name_words


def pdf_name_matches(pdf: str, query: str) -> bool:
    """Fallback gate 2: the top-1 PDF's name shares a keyword (or document hint such as 'Q9') with the query."""
    name_terms = content_terms(file_name_words(pdf))
    return bool(name_terms & content_terms(query))


def fallback_accepts(hits: Sequence[ChunkHit], floor: float, query: str) -> bool:
    """Gate 1: top-1 (by cosine) ≥ the fallback floor; gate 2: its PDF name matches the query."""
    if not hits:
        return False
    top = min(hits, key=lambda h: (-h.score, h.chunk_id))
    return top.score >= floor and pdf_name_matches(top.pdf, query)
