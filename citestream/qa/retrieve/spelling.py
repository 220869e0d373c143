"""Typos in a query read as the corpus' own spelling ("bioavailabilty" → "bioavailability").

A misspelt word matches nothing lexically and drags the query embedding off
its subject. A query word of five or more letters is a typo when no document
uses it in any inflection ("summarise" is known from "summarises") and it is
no English word (``english_words``: "leaving" is not a typo of "leading", nor
"serialization" of "sterilization"). It is read as the corpus
word closest in edit distance (at most 1 under ten letters, 2 from ten on;
same first letter), the more frequent one on a tie. A word near nothing
("blockchain") stays as written.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz.distance import DamerauLevenshtein

from ...core.text_units import matching_terms

MIN_LENGTH = 5
LONG_WORD = 10
_WORD = re.compile(r"[A-Za-z]+")


def max_edits(word: str) -> int:
    return 2 if len(word) >= LONG_WORD else 1


@dataclass(frozen=True)
class Spelling:
    counts: dict[str, int]                                      # lowercase word -> occurrences in the corpus
    english: frozenset[str] = frozenset()                       # common words, never typos
    _by_initial: dict[str, list[str]] = field(init=False, repr=False, compare=False)
    _stems: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_initial: dict[str, list[str]] = defaultdict(list)
        for word in sorted(self.counts):
            by_initial[word[0]].append(word)
        object.__setattr__(self, "_by_initial", dict(by_initial))
        object.__setattr__(self, "_stems", frozenset(_stem(w) for w in self.counts))

    def suggestion(self, word: str) -> str | None:
        """The corpus word to read ``word`` as, or None when it is known, short or near nothing."""
        lowered = word.lower()
        if (len(lowered) < MIN_LENGTH or lowered in self.counts or lowered in self.english
                or _stem(lowered) in self._stems):
            return None
        limit = max_edits(lowered)
        best: tuple[int, int, str] | None = None
        for candidate in self._by_initial.get(lowered[0], ()):
            if abs(len(candidate) - len(lowered)) > limit:
                continue
            distance = DamerauLevenshtein.distance(lowered, candidate, score_cutoff=limit)
            if distance <= limit:
                key = (distance, -self.counts[candidate], candidate)
                best = key if best is None or key < best else best
        return best[2] if best else None

    def correct(self, query: str) -> str:
        """``query`` with every misspelt word replaced by its corpus spelling; the rest unchanged."""
        return self.corrected(query)[0]

    def corrected(self, query: str) -> tuple[str, list[str]]:
        """``correct``'s text and what it changed ("sytem -> system"), in query order."""
        changes: list[str] = []

        def fix(match: re.Match) -> str:
            suggestion = self.suggestion(match.group())
            if suggestion is None:
                return match.group()
            changes.append(f"{match.group()} -> {suggestion}")
            return suggestion

        return _WORD.sub(fix, query), changes


def _stem(word: str) -> str:
    return next(iter(matching_terms(word)), word)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Words of English, never typos: the whole words of the embedding model's WordPiece vocabulary (~22,500) and
    pyspellchecker's English word list (~160,000, MIT; shipped in its wheel, nothing downloaded). The WordPiece
    list alone took "serialization" for a typo of the corpus' "sterilization" and "interchangeable" for
    "interchangeably": a question about something the documents never mention must not be read as one they do."""
    from spellchecker import SpellChecker

    from ...embedding import wordpiece_words

    return wordpiece_words() | frozenset(SpellChecker(language="en").word_frequency.keys())


def build_spelling(documents: dict[str, str], english: frozenset[str] = frozenset()) -> Spelling:
    counts: Counter[str] = Counter()
    for body in documents.values():
        counts.update(w.lower() for w in _WORD.findall(body))
    return Spelling(dict(counts), english)
