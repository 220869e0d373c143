"""safe_normalize_v1 (answer-assembly-contract R2.3): make text safe to quote, never change what it says.

What it does, and only this: drop null bytes, unpaired surrogates and
invisible format characters (zero-width and bidirectional controls, soft
hyphens); turn control characters and every Unicode space or line separator
into a space; collapse runs of whitespace to one space; compose characters
(NFC, which never changes a character's meaning, unlike NFKC that would turn
"m²" into "m2"). Words, digits, punctuation and their order are untouched, so
sanitized text is always the original's words in the original order, and it
is a single line: it can never open a new line inside the prompt.
"""

from __future__ import annotations

import unicodedata

SANITIZATION_MODE = "safe_normalize_v1"
_REMOVED = frozenset({"Cf", "Cs"})          # format characters, lone surrogates
_AS_SPACE = frozenset({"Cc", "Zs", "Zl", "Zp"})  # control characters, spaces and separators


def sanitize(text: str) -> str:
    """Each distinct character's category is looked up once; ``str.translate`` applies the result."""
    table: dict[int, str | None] = {0: None}
    for char in set(text):
        category = unicodedata.category(char)
        if category in _REMOVED:
            table[ord(char)] = None
        elif category in _AS_SPACE:
            table.setdefault(ord(char), " ")
    return unicodedata.normalize("NFC", " ".join(text.translate(table).split()))
