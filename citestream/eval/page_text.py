"""Page text read straight from the corpus PDFs (never from the chunker), for checking golden sets."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..config import PROJECT_ROOT

CORPUS_DIR = (PROJECT_ROOT.parent / "shared" / "corpus").resolve()


@lru_cache(maxsize=64)
def page_texts(pdf_path: str | Path) -> tuple[str, ...]:
    """The text of every physical page, index 0 = page 1 (pypdfium2, the same reader ingest uses)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf_path))
    try:
        return tuple(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


def corpus_pdfs(corpus_dir: Path = CORPUS_DIR) -> list[Path]:
    return sorted(corpus_dir.glob("*.pdf"))
