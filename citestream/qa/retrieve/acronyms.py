"""Acronyms the corpus itself defines ("bioavailability (BA)"), so a query in one form also searches the other.

Definitions are found with the Schwartz-Hearst algorithm (the ``abbreviations``
package) over each document's text. Left out: an acronym that more than a
quarter of the documents use (FDA, ICH: common vocabulary, whose expansion adds
latency and no discrimination), one that is also a Roman numeral ("Paragraph
IV" is not "intravenous"), and a long form starting with a stopword ("of
generic drugs" for OGD).
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ...core.text_units import STOPWORDS

UBIQUITOUS_SHARE = 0.25
_ROMAN = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")


@dataclass(frozen=True)
class AcronymMap:
    long_of: dict[str, str]   # "BA" -> "bioavailability"
    _forms: list[tuple[str, str, re.Pattern, re.Pattern]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # compiled once: ``additions`` runs on every question
        object.__setattr__(self, "_forms", [(short, long, _whole_word(short), _whole_word(long))
                                            for short, long in self.long_of.items()])

    def additions(self, query: str) -> list[str]:
        """The other form of every acronym or long form in ``query`` that the query lacks, in query order.

        A long form inside a longer one found ("new drug application" in "abbreviated new drug application")
        does not count."""
        return [long if written == short else short for _, _, short, long, written in self._found(query)]

    def spelled_out(self, query: str, english: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
        """``query`` with each acronym it uses written as the documents define it, "long form (SHORT)", whichever
        form the query used, and the acronyms so written. A lower-case short form that is no English word counts
        ("an anda" is "an ANDA"). Both forms side by side is how a sentence that defines or uses either reads, so
        a question in either form scores alike."""
        found = self._found(query, english)
        parts, end = [], 0
        for start, stop, short, long, written in found:
            if start < end:  # overlaps the form before it: that one is spelled out already
                continue
            plural = query[start:stop].endswith("s") and not written.endswith("s")
            both = (f"{long}s ({short}s)" if plural else f"{long} ({short})") if written == short \
                else f"{query[start:stop]} ({short}s)" if plural else f"{query[start:stop]} ({short})"
            parts += [query[end:start], both]
            end = stop
        return "".join(parts + [query[end:]]), [short for _, _, short, _, _ in found]

    def _found(self, query: str, english: frozenset[str] = frozenset()) -> list[tuple[int, int, str, str, str]]:
        """(start, end, short, long, the form written) of every acronym or long form in ``query`` whose other form
        the query lacks, in query order; none inside a longer one found."""
        lowered = query.lower()
        found: list[tuple[int, int, str, str, str]] = []
        for short, long, short_pattern, long_pattern in self._forms:  # a substring test before each pattern
            at_short = short_pattern.search(query) if short in query else None
            if at_short is None and english and short.lower() in lowered and short.lower() not in english:
                at_short = _whole_word(short.lower()).search(query)
            at_long = long_pattern.search(lowered) if long in lowered else None
            if at_short and not at_long:
                found.append((*at_short.span(), short, long, short))
            elif at_long and not at_short:
                found.append((*at_long.span(), short, long, long))
        return [f for f in sorted(found)
                if not any(o[0] <= f[0] and f[1] <= o[1] and o[:2] != f[:2] for o in found)]


def _whole_word(form: str) -> re.Pattern:
    """``form`` or its plural, not inside a longer word or hyphenated compound ("PAT", "PATs", not "PAT-based")."""
    return re.compile(rf"(?<![\w-]){re.escape(form)}s?(?![\w-])")


def build_map(documents: dict[str, str]) -> AcronymMap:
    """Per short form, the long form most documents give it (alphabetically first on a tie: the same map whatever
    order the documents come in); ubiquitous acronyms left out."""
    schwartz_hearst = _schwartz_hearst()
    defined_in: dict[str, Counter] = defaultdict(Counter)
    for body in documents.values():
        pairs = schwartz_hearst.extract_abbreviation_definition_pairs(doc_text=body, most_common_definition=True)
        for short, long in pairs.items():
            short, long = _singular(short.strip(), " ".join(long.split()))
            if _usable(short, long):
                defined_in[short][long.lower()] += 1
    limit = UBIQUITOUS_SHARE * len(documents)
    words = [_words(body) for body in documents.values()]
    return AcronymMap({short: min(longs, key=lambda long: (-longs[long], long))
                       for short, longs in sorted(defined_in.items()) if _used_in(short, words) <= limit})


def _singular(short: str, long: str) -> tuple[str, str]:
    """A plural definition ("target product profiles (TPPs)") as its singular, so "TPP" and "TPPs" both read it."""
    if len(short) > 2 and short.endswith("s") and short[:-1].isupper():
        *head, last = long.split()
        last = last[:-3] + "y" if last.endswith("ies") else last[:-1] if last.endswith("s") and not last.endswith(
            "ss") else last
        return short[:-1], " ".join([*head, last])
    return short, long


def _schwartz_hearst():
    """The module, imported without what its import does to the process: ``logging.basicConfig(level=INFO)``, which
    turned every INFO line of every library on (a log line per answer cost a worker's CPU, and library users noise)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    from abbreviations import schwartz_hearst

    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    root.setLevel(level)
    return schwartz_hearst


_WORD_RUN = re.compile(r"(?<![\w-])\w+(?![\w-])")
"""A maximal run of word characters with no hyphen on either side: what ``_whole_word`` matches, for any form."""


def _words(body: str) -> frozenset[str]:
    """The document's whole words, read once: a form is used in it when it or its plural is among them. Searching
    each acronym's pattern through every document instead grew with acronyms × documents: 6.7 of the 8.3 s of CPU
    a lexicon took on 42 documents, paid by every worker, under the GIL, after every ingest (2026-11-30)."""
    return frozenset(_WORD_RUN.findall(body))


def _used_in(short: str, words: list[frozenset[str]]) -> int:
    """How many documents use ``short`` as a whole word (``_whole_word``: it or its plural, not hyphenated)."""
    return sum(short in w or f"{short}s" in w for w in words)


def _usable(short: str, long: str) -> bool:
    """A letters-and-digits acronym of 2-8 characters with at least two capitals, defined by 1-8 plain words."""
    return (re.fullmatch(r"[A-Za-z][A-Za-z0-9]{1,7}", short) is not None and sum(c.isupper() for c in short) >= 2
            and not _ROMAN.fullmatch(short) and re.fullmatch(r"[\w ,&'’-]+", long) is not None
            and 1 <= len(long.split()) <= 8 and long.split()[0].lower() not in STOPWORDS)
