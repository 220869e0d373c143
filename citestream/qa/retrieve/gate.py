"""The similarity floor and the fallback with its acceptance gate (qa-contract-v1 §1)."""

from __future__ import annotations

from ...store.search import Cosine
from ...core.text_units import content_terms, file_name_words


def pdf_name_matches(pdf: str, query: str) -> bool:
    """Fallback gate 2: the top-1 PDF's name shares a keyword (or document hint such as 'Q9') with the query."""
    name_terms = content_terms(file_name_words(pdf))
    return bool(name_terms & content_terms(query))


def fallback_accepts(top: Cosine | None, floor: float, query: str) -> bool:
    """Gate 1: the top-1 candidate (by cosine) ≥ the fallback floor; gate 2: its PDF name matches the query."""
    return top is not None and top.score >= floor and pdf_name_matches(top.pdf, query)
