"""A cited page as a PNG (pypdfium2), and where the cited chunk's text sits on it.

Only ingested documents are opened, by the path ingest stored for them
(``documents.source``) and only when the file there still has the SHA-256 that
was ingested, so the page shown is the page that was indexed. The browser
names a document and a page number, never a path. PNGs are cached under the
state folder by content hash and page, so a page is rendered once.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pypdfium2 as pdfium

from ..config import PROJECT_ROOT
from ..core.hashing import file_sha256
from .queries import DocumentInfo

RENDER_SCALE = 2.0  # 144 dpi: sharp on a laptop, about 150-400 kB a page
MIN_MATCH_CHARS = 10
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_render_lock = threading.Lock()  # pdfium is not thread-safe


class PageUnavailable(Exception):
    """The page cannot be shown; the message says why in words a reader can act on."""


@dataclass(frozen=True)
class Box:
    """A highlighted area as fractions of the page (origin top-left), so it scales with the image."""

    left: float
    top: float
    width: float
    height: float


def source_pdf(doc: DocumentInfo) -> Path:
    """The file ``doc`` was ingested from, checked to still hold the ingested bytes."""
    if not doc.source:
        raise PageUnavailable("this document was ingested as text, not from a PDF file")
    path = Path(doc.source)
    if not path.is_absolute():  # older ingests stored the path as given; make ran from the project root
        path = PROJECT_ROOT / path
    if path.suffix.lower() != ".pdf" or not path.is_file():
        raise PageUnavailable("the PDF is no longer where it was ingested from")
    stat = path.stat()
    if _sha256(str(path), stat.st_size, stat.st_mtime_ns) != doc.content_sha256:
        raise PageUnavailable("the PDF changed since it was ingested; ingest it again to see its pages")
    return path


@lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))


def _check_page(doc: DocumentInfo, page: int) -> None:
    if not 1 <= page <= doc.pages:
        raise PageUnavailable(f"{doc.pdf} has pages 1 to {doc.pages}, not {page}")


def page_png(doc: DocumentInfo, page: int, cache_dir: Path) -> Path:
    """The rendered page, from the cache or rendered now (written atomically)."""
    _check_page(doc, page)
    out = cache_dir / doc.content_sha256 / f"p{page}-x{RENDER_SCALE:g}.png"
    if out.exists():
        return out
    path = source_pdf(doc)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    with _render_lock:
        pdf = pdfium.PdfDocument(str(path))
        try:
            image = pdf[page - 1].render(scale=RENDER_SCALE).to_pil()
        finally:
            pdf.close()
    image.save(tmp, format="PNG", optimize=False)
    tmp.replace(out)
    return out


def _key(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


def highlight_boxes(doc: DocumentInfo, page: int, chunk_text: str) -> list[Box]:
    """Text segments of the page that belong to the chunk: each segment's letters and digits occur in the chunk's.

    Comparing letters and digits only survives what ingest cleaned (joined
    hyphenation, merged lines); running headers and other chunks' lines on the
    page do not occur in the chunk and stay unmarked. Segments shorter than
    ``MIN_MATCH_CHARS`` are left out (a lone "the" occurs anywhere).
    """
    _check_page(doc, page)
    path = source_pdf(doc)
    wanted = _key(chunk_text)
    with _render_lock:
        pdf = pdfium.PdfDocument(str(path))
        try:
            pdf_page = pdf[page - 1]
            width, height = pdf_page.get_size()
            text_page = pdf_page.get_textpage()
            rects = [text_page.get_rect(i) for i in range(text_page.count_rects())]
            segments = [_key(text_page.get_text_bounded(*r)) for r in rects]
        finally:
            pdf.close()
    found = [len(s) >= MIN_MATCH_CHARS and s in wanted for s in segments]
    # a short word ("industry,") counts when it occurs in the chunk and a neighbour was found; a bare number
    # does not (margin line numbers sit next to every line)
    short = [not f and not s.isdigit() and bool(s) and s in wanted
             and any(found[j] for j in (i - 1, i + 1) if 0 <= j < len(found))
             for i, (s, f) in enumerate(zip(segments, found))]
    return [Box(round(left / width, 5), round(1 - top / height, 5), round((right - left) / width, 5),
                round((top - bottom) / height, 5))
            for (left, bottom, right, top), f, s in zip(rects, found, short) if f or s]
