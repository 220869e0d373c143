"""Small, deterministic text helpers shared by the filter, the extractive backend and the validator."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .core.injection import is_injection

_WORD = re.compile(r"[a-z0-9]+(?:[-'.][a-z0-9]+)*")
# A sentence ends at . ! ? or ; (or a closing quote after them) before a capital or a digit; a footnote mark
# glued to the full stop ("holder.29 Applicants", "writing.”30 Such") stays with the sentence it ends.
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?;])|(?<=[.!?][\u201d\"])|(?<=[a-z)][.!?]\d)|(?<=[a-z)][.!?]\d\d)|(?<=[.!?][\u201d\"]\d)"
    r"|(?<=[.!?][\u201d\"]\d\d))\s+(?=[\"'\u201c(\[]?[A-Z0-9])")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "U.S.", "No.", "Sec.", "approx.", "vs.", "Fig.", "et al.")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    may must shall also per via within without upon whether any many much one two please tell explain describe
    according provided pdfs pdf document documents guidance say says said state states""".split()
)


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


@lru_cache(maxsize=8192)
def passage_words(passage: str) -> tuple[str, ...]:
    """``words`` of a chunk's text, remembered: the filter and validation read the same chunks again and again."""
    return tuple(words(passage))


def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'submissions'/'submission', not a linguistic stemmer. A word in
    -ss keeps its ending, so 'process' meets 'processes' (both 'process'), not 'proces' beside 'process'."""
    if word.endswith("ss"):
        return word
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


# A statute, regulation or guideline cited with its subsections: "505(b)(2)", "314.94(a)(8)", "Q8(R2)".
_CITATION = re.compile(r"(?<![\w.])[a-z]?\d+(?:\.\d+)*[a-z]?(?:\([a-z0-9]{1,4}\))+")


def content_terms(text: str) -> set[str]:
    """Stemmed words that carry meaning (no stopwords, no one-letter tokens), and every cited provision whole:
    "505(b)(2)" and "505(b)(1)" share the word "505" but are different provisions."""
    normalized = normalize(text)
    terms = {stem(w) for w in _WORD.findall(normalized) if w not in STOPWORDS and len(w) > 1}
    return terms | set(_CITATION.findall(normalized))


def split_sentences(text: str) -> list[str]:
    protected = text
    for i, abbr in enumerate(_ABBREVIATIONS):
        protected = protected.replace(abbr, abbr.replace(".", f"\u0000{i}\u0000"))
    parts = _SENTENCE_END.split(" ".join(protected.split()))
    restored = []
    for part in parts:
        for i, abbr in enumerate(_ABBREVIATIONS):
            part = part.replace(abbr.replace(".", f"\u0000{i}\u0000"), abbr)
        if part.strip():
            restored.append(part.strip())
    return restored


_BULLET = re.compile(r"\s*[•●▪◦]\s*")
_CLAUSE_END = re.compile(r"(?<=[;:])\s+")
_LEADING_MARKS = re.compile(r"^(?:\d{1,4}\s+)+(?=[A-Z\u201c\"(])")
# A list item's marker that sentence splitting left at the end of the item before ("... as follows: a.").
_TRAILING_MARKER = re.compile(r"(?<=[:;.,)\d])\s+(?:(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)]|\((?:[a-z]|[ivx]{1,4}|\d{1,2})\))$")  # noqa: E501
_ONLY_MARKER = re.compile(r"^(?:\(?(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)])$")
MAX_UNIT_WORDS = 80  # longer pieces are run-ons (a list printed without full stops): split into clauses


@lru_cache(maxsize=8192)
def sentence_units(text: str) -> tuple[str, ...]:
    """The units an answer is made of: sentences, bulleted items (PDF lists have no full stops between items),
    and the clauses of a run-on longer than ``MAX_UNIT_WORDS`` words, split after ; and :. Line numbers or
    footnote marks in front of a unit, and a list marker left at its end ("... as follows: a."), are left out:
    what remains is still a verbatim span of the source, and a list's lead-in ends with its colon. Remembered per
    text (as ``scored_units``): the filter, the backend and validation split the same chunks."""
    pieces = (p.strip() for sentence in split_sentences(text) for p in _BULLET.split(sentence))
    units = (_TRAILING_MARKER.sub("", _LEADING_MARKS.sub("", clause)) for p in pieces if p.strip()
             for clause in _clauses(p))
    return tuple(u for u in units if u and not _ONLY_MARKER.match(u))


MIN_UNIT_WORDS = 5


@lru_cache(maxsize=16384)
def quotable(unit: str) -> bool:
    """A unit that can stand as an answer sentence: 5 to ``MAX_UNIT_WORDS`` words, and not an instruction aimed
    at a model (a prompt injection inside a document). Remembered per unit: retrieval and the backend ask about
    the same units."""
    n = len(words(unit))
    return MIN_UNIT_WORDS <= n <= MAX_UNIT_WORDS and not is_injection(unit)


@lru_cache(maxsize=8192)
def scored_units(passage: str) -> tuple[str, ...]:
    """The units a passage is scored and quoted by: its quotable sentence units, or the passage itself when it has
    none. Remembered per passage, as the relevance model remembers their vectors: a popular chunk comes back with
    every question about it."""
    return tuple(u for u in sentence_units(passage) if quotable(u)) or (passage,)


def _clauses(piece: str) -> list[str]:
    if len(piece.split()) <= MAX_UNIT_WORDS:
        return [piece]
    clauses: list[str] = []
    for clause in (c.strip() for c in _CLAUSE_END.split(piece)):
        if clauses and len(clause.split()) < 3:  # "or," / "and" left over from a list: stays with its item
            clauses[-1] = f"{clauses[-1]} {clause}"
        elif clause:
            clauses.append(clause)
    return clauses


def file_name_words(pdf: str) -> str:
    """A document's file name as words ("Q9_Guideline.pdf" -> "Q9 Guideline"), for matching a question to it."""
    return re.sub(r"[_\-.]+", " ", re.sub(r"\.pdf$", "", pdf, flags=re.I))


def matching_terms(text: str) -> set[str]:
    """``content_terms`` with a final silent e dropped, so 'reduce', 'reduces' and 'reduced' meet as 'reduc'."""
    return {t[:-1] if len(t) > 4 and t.endswith("e") else t for t in content_terms(text)}


# The disclaimers and distribution notes on every FDA/ICH guidance's title pages: never the answer to a question.
DISCLAIMER = re.compile(
    r"(?:represents?|will represent|will reflect)\b.{0,80}?current\s*thinking"
    r"|does not (?:establish|create|confer)(?: or (?:create|confer))? any rights"
    r"|not (?:be )?binding on (?:FDA|the public)|does not operate to bind"
    r"|alternative approach (?:may be used )?if (?:it|such approach) satisfies"
    r"|additional copies (?:of this guidance )?are available"
    r"|contact the (?:FDA )?(?:staff|office) responsible|has been developed by the appropriate ICH",
    re.IGNORECASE,
)


def disclaimer_share(text: str) -> float:
    """Share of the text's words in disclaimer sentences: near 1 for a title page, small for a page of content."""
    sentences = split_sentences(text)
    total = sum(len(words(s)) for s in sentences)
    return sum(len(words(s)) for s in sentences if DISCLAIMER.search(s)) / total if total else 0.0
