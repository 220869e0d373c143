"""The most text one regular expression reads at once, and what keeps every pattern within it.

A pattern that backtracks can cost the square of its input (one record with a 500 kB string once held a core for
ten minutes), and even a linear one with many alternatives costs about a microsecond a character here. So every
string a pattern reads is bounded before it is read: a record's fields by their contracts (a question 2,000
characters, a claim, a constraint and each string of a compliance document 4,000), a PDF page by the sandbox's cap
(``CITESTREAM_PDF_MAX_PAGE_CHARS``, at most this), a model's reply by ``MAX_REPLY_CHARS``, and text from
exceptions and error bodies is cut before it is scrubbed. The one text read whole beyond it, an inline document
(800 kB), is split by chunking's own patterns, which stay within budget on 1 MB. ``tests/core/test_bounds.py`` holds
every pattern of the package to that budget (docs/security.md, point 11).
"""

from __future__ import annotations

MAX_SCANNED_CHARS = 50_000
"""The longest string any pattern outside chunking reads: a PDF page's cap."""
MAX_REPLY_CHARS = 20_000
"""A model's reply longer than this is a failed generation, never parsed (prompts ask for a few sentences)."""


def scanned(text: str, limit: int = MAX_SCANNED_CHARS) -> str:
    """The part of ``text`` a pattern may read: its first ``limit`` characters."""
    return text if len(text) <= limit else text[:limit]
