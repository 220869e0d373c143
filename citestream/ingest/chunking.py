"""Split page text into child chunks (~800 chars, searched) grouped under parents (~3000 chars, context)."""

from __future__ import annotations

import re
from dataclasses import dataclass

CHILD_CHARS = 800
PARENT_CHARS = 3000


@dataclass(frozen=True)
class Piece:
    page: int
    text: str
    section: str | None = None


def _split(text: str, limit: int) -> list[str]:
    """Greedy split at sentence, then word boundaries; pieces never exceed ``limit`` (unless one word does)."""
    sentences = re.split(r"(?<=[.!?;:])\s+", " ".join(text.split()))
    pieces, current = [], ""
    for sentence in sentences:
        while len(sentence) > limit:  # a run-on "sentence" (tables, lists): cut at a word boundary
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if current and len(current) + 1 + len(sentence) > limit:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return [p for p in pieces if p]


def child_pieces(pages: list[str]) -> list[Piece]:
    """Child-sized pieces, each on one physical page (so its page number is exact)."""
    return [Piece(page=n, text=t) for n, page in enumerate(pages, start=1) for t in _split(page, CHILD_CHARS)]


def group_parents(children: list[Piece]) -> list[list[int]]:
    """Consecutive children grouped into parents of about PARENT_CHARS; returns child indexes per parent."""
    groups, current, size = [], [], 0
    for i, child in enumerate(children):
        if current and size + len(child.text) > PARENT_CHARS:
            groups.append(current)
            current, size = [], 0
        current.append(i)
        size += len(child.text) + 1
    if current:
        groups.append(current)
    return groups
