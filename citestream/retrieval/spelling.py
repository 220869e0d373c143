"""Typos in a query read as the corpus' own spelling ("bioavailabilty" → "bioavailability").

A misspelt word matches nothing lexically and drags the query embedding off
its subject. A query word of five or more letters is a typo when no document
uses it in any inflection ("summarise" is known from "summarises") and it is
not a common English word (a whole word of the embedding model's WordPiece
vocabulary: "leaving" is not a typo of "leading"). It is read as the corpus
word closest in edit distance (at most 1 under ten letters, 2 from ten on;
same first letter), the more frequent one on a tie. A word near nothing
("blockchain") stays as written.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from rapidfuzz.distance import DamerauLevenshtein

from ..text import matching_terms

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
        return _WORD.sub(lambda m: self.suggestion(m.group()) or m.group(), query)


def _stem(word: str) -> str:
    return next(iter(matching_terms(word)), word)


def build_spelling(documents: dict[str, str], english: frozenset[str] = frozenset()) -> Spelling:
    counts: Counter[str] = Counter()
    for body in documents.values():
        counts.update(w.lower() for w in _WORD.findall(body))
    return Spelling(dict(counts), english)
