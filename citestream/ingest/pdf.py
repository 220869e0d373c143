"""Text of a PDF, page by page (pypdfium2: fast, permissive licence)."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium


class UnreadablePdf(Exception):
    """Corrupt, encrypted or otherwise unreadable file."""


def page_texts(path: Path) -> list[str]:
    """One string per physical page (index 0 = page 1)."""
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise UnreadablePdf(f"{path.name}: {exc}") from exc
    try:
        texts = []
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n"))
            textpage.close()
            page.close()
        return texts
    finally:
        pdf.close()
