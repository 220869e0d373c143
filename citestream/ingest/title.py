"""A document's title as a person would name it: the PDF's own title (its metadata), else its first heading, else
its file name. The Documents page and a citation show it; the file name is shown beside it, never instead of it,
unless nothing better was found."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .layout import Block

MAX_TITLE_CHARS = 200
_MAX_TITLE_WORDS = 25
_FILE_LIKE = re.compile(r"\.(?:pdf|docx?|rtf|odt|txt|indd|xlsx?|pptx?)\s*$|^(?:microsoft (?:word|powerpoint) - |"
                        r"untitled\b|document\d*$|title$|\S+_\S+$)", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]")


def _plain(text: str) -> str:
    return " ".join(text.split())[:MAX_TITLE_CHARS].strip(" -–—:;,.")


def usable(text: str, stem: str = "") -> bool:
    """A title a person wrote: words with letters, not a file name or an editor's placeholder, not too long."""
    plain = _plain(text)
    if len(_LETTERS.findall(plain)) < 3 or len(plain.split()) > _MAX_TITLE_WORDS or _FILE_LIKE.search(plain):
        return False
    return plain.casefold() != stem.replace("_", " ").replace("-", " ").casefold()


def read_title(metadata: Mapping[str, str] | None, blocks: Iterable[Block], stem: str) -> str:
    """The metadata's ``Title``, else the first heading on the first two pages, else ``stem`` (the file name)."""
    for key, value in (metadata or {}).items():
        if key.lower().lstrip("/") == "title" and usable(value, stem):
            return _plain(value)
    for block in blocks:
        if block.page > 2:
            break
        if block.kind == "heading" and usable(block.text, stem):
            return _plain(block.text)
    return stem
