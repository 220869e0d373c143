"""Raw text fragments of a PDF with their geometry and font, page by page (pypdfium2, in a limited child process).

pypdfium2 is Apache-2.0/BSD (PyMuPDF is AGPL), parses the whole corpus in about
4 s, and its text page gives each character's box, font size and weight: what
``layout`` needs to find headings, margins and line numbers. A fragment is one
line as pdfium's text stream emits it; ``layout`` rebuilds visual lines.

pdfium runs in a child process under memory, CPU and wall-time limits, and a PDF
over a cap on pages, characters or page size is refused there
(``citestream.sandbox``): a PDF that inflates to gigabytes kills the child, not the
worker, and becomes ``UnreadablePdf`` with its reason. Here the child's reply is
turned into records, each value checked for its type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..sandbox.budget import PdfRejected
from ..sandbox.pool import pdf_pool


class UnreadablePdf(Exception):
    """Corrupt, encrypted, over a limit or otherwise unreadable file; the message says which."""


@dataclass(slots=True)
class Fragment:
    """One line of text as the PDF stores it, with where it sits (PDF units, origin bottom-left)."""

    page: int  # 1-based physical page
    text: str
    x0: float
    x1: float
    bottom: float
    top: float
    size: float
    bold: bool
    lead_number: int | None = None  # a leading integer token (line numbers, page numbers)
    lead_gap: float = 0.0  # space between that number and the next character (line numbers sit apart)
    marks: tuple[tuple[int, int], ...] = ()  # (start, end) of digit runs in ``text`` no sentence holds: footnote marks
    rest_x0: float = 0.0  # where the text after ``lead_number`` starts (a line number stripped leaves it there)


@dataclass
class RawPage:
    number: int
    width: float
    height: float
    text: str  # the page's full text as pdfium reports it (pass 2 compares against it)
    fragments: list[Fragment]


def read_pdf(path: Path, data: bytes | None = None) -> tuple[list[RawPage], dict[str, str]]:
    """Every physical page's fragments (index 0 = page 1) and the document information's text fields (author,
    title, ...); from ``data`` when given, else from the file."""
    data = path.read_bytes() if data is None else data
    if not data:
        raise UnreadablePdf(f"{path.name}: empty file (0 bytes)")
    try:
        (pages, metadata), _ = pdf_pool().call("parse", data)
        info = {str(k): v for k, v in metadata if isinstance(v, str)}
        return [_page(number, page) for number, page in enumerate(pages, start=1)], info
    except PdfRejected as exc:
        raise UnreadablePdf(f"{path.name}: {exc}") from None
    except (TypeError, ValueError, OverflowError):
        raise UnreadablePdf(f"{path.name}: the PDF reader's reply was malformed") from None


def read_pages(path: Path, data: bytes | None = None) -> list[RawPage]:
    """Every physical page's fragments (index 0 = page 1)."""
    return read_pdf(path, data)[0]


def _page(number: int, raw: list) -> RawPage:
    width, height, text, fragments = raw
    if not isinstance(text, str):
        raise TypeError("page text")
    return RawPage(number, float(width), float(height), text, [_fragment(number, f) for f in fragments])


def _fragment(page: int, raw: list) -> Fragment:
    text, x0, x1, bottom, top, size, bold, lead_number, lead_gap, marks, rest_x0 = raw
    if not isinstance(text, str) or not isinstance(bold, bool):
        raise TypeError("fragment")
    gap = float(lead_gap)
    runs = tuple((int(a), int(b)) for a, b in marks)
    if any(not 0 <= a < b <= len(text) for a, b in runs):
        raise ValueError("mark outside the fragment")
    return Fragment(page, text, float(x0), float(x1), float(bottom), float(top), float(size), bold,
                    None if lead_number is None else int(lead_number), gap if not math.isnan(gap) else 0.0, runs,
                    float(rest_x0))


def page_texts(path: Path) -> list[str]:
    """One plain string per physical page (index 0 = page 1): the PDF's own text, for checks and pass 2."""
    return [p.text for p in read_pages(path)]
