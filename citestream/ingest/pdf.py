"""Raw text fragments of a PDF with their geometry and font, page by page (pypdfium2).

pypdfium2 is Apache-2.0/BSD (PyMuPDF is AGPL), parses the whole corpus in about
4 s, and its text page gives each character's box, font size and weight: what
``layout`` needs to find headings, margins and line numbers. A fragment is one
line as pdfium's text stream emits it; ``layout`` rebuilds visual lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_LINE_BREAK = re.compile(r"\r\n|\r|\n|(?<=\ufffe)")
"""pdfium ends a line hyphenated at its end with U+FFFE and runs on into the next line: split there too."""
_LEAD_NUMBER = re.compile(r"^(\d{1,4})(?:\s+|$)")


class UnreadablePdf(Exception):
    """Corrupt, encrypted or otherwise unreadable file; the message says which."""


@dataclass
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


@dataclass
class RawPage:
    number: int
    width: float
    height: float
    text: str  # the page's full text as pdfium reports it (pass 2 compares against it)
    fragments: list[Fragment]


def open_pdf(path: Path, data: bytes | None = None) -> pdfium.PdfDocument:
    """Open (``data``: the file's bytes, already read within the caps) or raise ``UnreadablePdf``."""
    if (len(data) if data is not None else path.stat().st_size) == 0:
        raise UnreadablePdf(f"{path.name}: empty file (0 bytes)")
    try:
        return pdfium.PdfDocument(data if data is not None else str(path))
    except pdfium.PdfiumError as exc:
        message = str(exc).lower()
        if "password" in message or "security" in message:
            raise UnreadablePdf(f"{path.name}: encrypted PDF (a password is required)") from exc
        raise UnreadablePdf(f"{path.name}: corrupt or not a PDF ({exc})") from exc


def read_pages(path: Path, data: bytes | None = None) -> list[RawPage]:
    """Every physical page's fragments (index 0 = page 1); from ``data`` when given, else from the file."""
    pdf = open_pdf(path, data)
    try:
        pages = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            width, height = page.get_size()
            text = textpage.get_text_range()
            pages.append(RawPage(index + 1, width, height, _plain(text), _fragments(textpage, text, index + 1)))
            textpage.close()
            page.close()
        return pages
    finally:
        pdf.close()


def _plain(text: str) -> str:
    return re.sub(r"\r\n|\r", "\n", text).replace("\x02", "-").replace("\ufffe", "-\n")


def _fragments(textpage, text: str, page_no: int) -> list[Fragment]:
    aligned = len(text) == textpage.count_chars()  # char indexes match string offsets (almost always)
    out, start = [], 0
    for match in [*_LINE_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        line = text[start:end]
        stripped = line.strip()
        if stripped:
            first = start + (len(line) - len(line.lstrip()))
            last = start + len(line.rstrip()) - 1
            out.append(_fragment(textpage, page_no, stripped.replace("\x02", "-").replace("\ufffe", "-"), first, last,
                                 aligned))
        start = match.end() if match else end
    return out


def _fragment(textpage, page_no: int, text: str, first: int, last: int, aligned: bool) -> Fragment:
    if not aligned:
        return Fragment(page_no, text, 0.0, 0.0, 0.0, 0.0, 0.0, False)
    probes = sorted({first, (first + last) // 2, last})
    boxes = [textpage.get_charbox(i, loose=True) for i in probes]
    heights = [b[3] - b[1] for b in boxes]  # the glyph's font box: a size that holds under scaled text matrices
    tallest = max(range(len(probes)), key=heights.__getitem__)  # the largest glyph: not a superscript
    main = probes[tallest]
    left, right = boxes[0][0], boxes[-1][2]
    _, bottom, _, top = boxes[tallest]
    weight = pdfium_c.FPDFText_GetFontWeight(textpage.raw, main)
    fragment = Fragment(page_no, text, left, right, bottom, top, round(heights[tallest], 1), weight >= 600)
    number = _LEAD_NUMBER.match(text)
    if number:
        fragment.lead_number = int(number.group(1))
        digits_end = first + len(number.group(1)) - 1
        rest = number.end()
        if rest >= len(text):
            fragment.lead_gap = float("inf")
        else:
            _, _, number_right, _ = textpage.get_charbox(digits_end, loose=False)
            next_left, _, _, _ = textpage.get_charbox(first + rest, loose=False)
            fragment.lead_gap = next_left - number_right
    return fragment


def page_texts(path: Path) -> list[str]:
    """One plain string per physical page (index 0 = page 1): the PDF's own text, for checks and pass 2."""
    return [p.text for p in read_pages(path)]
