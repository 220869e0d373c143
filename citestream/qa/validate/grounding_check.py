"""R5's grounding rule: is an answer sentence supported by its cited chunk? Deterministic; the rule is in
:func:`grounding`'s docstring. Also how a row is split into sentences (``answer_sentences``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.text_units import matching_terms, passage_words, split_sentences, words

GROUNDING_MIN_SUPPORT = 0.8
GROUNDING_WINDOW_SENTENCES = 3
NEGATION_REACH = 4  # words before a verbatim quote that could negate it ("it is not the case that ...")

_LEADING_CITATIONS = re.compile(r"^(?:\s*\[C\d+\])+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
NEGATION = frozenset({"not", "no", "never", "none", "neither", "nor", "cannot", "without", "nothing", "nowhere"})
_MODALS = frozenset({"must", "shall", "should", "may", "might", "can", "could", "required", "mandatory",
                     "optional", "prohibited", "voluntary"})


def answer_sentences(text: str) -> list[str]:
    """Split a row into sentences; markers written after the full stop ("... 70%. [C0]") stay with their sentence."""
    pieces: list[str] = []
    for piece in split_sentences(text):
        lead = _LEADING_CITATIONS.match(piece)
        if lead and pieces:
            pieces[-1] = f"{pieces[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end():].strip()
        if not piece:
            continue
        if pieces and pieces[-1].endswith(";"):  # a clause, not a sentence
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def word_seq_in(needle: tuple[str, ...], haystack: tuple[str, ...]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _quoted_from(sentence: str, match: re.Match, source_words: tuple[str, ...]) -> bool:
    """True when the match, with one word either side, is a verbatim word sequence of the source."""
    before = words(sentence[: match.start()])[-1:]
    after = words(sentence[match.end():])[:1]
    return word_seq_in(tuple(before + words(match.group(0)) + after), source_words)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _verbatim_unnegated(sentence: str, chunk_text: str) -> bool:
    """The sentence is a verbatim word sequence of the chunk, and none of the four words before it negates it."""
    needle, haystack = tuple(words(sentence)), passage_words(chunk_text)
    n = len(needle)
    return any(haystack[i:i + n] == needle and not set(haystack[max(0, i - NEGATION_REACH):i]) & NEGATION
               for i in range(len(haystack) - n + 1))


@dataclass(frozen=True)
class Grounding:
    supported: bool
    support: float
    reason: str = ""


def grounding(sentence: str, chunk_text: str) -> Grounding:
    """Is ``sentence`` supported by ``chunk_text``? Deterministic, and the rule is the documentation:

    A verbatim quote (the sentence's words, in order, somewhere in the chunk)
    is supported unless one of the ``NEGATION_REACH`` words just before it is
    a negation. Otherwise, take every window of 1 to ``GROUNDING_WINDOW_SENTENCES`` consecutive
    sentences of the chunk; the best window is the one holding the largest
    share of the sentence's content terms (stemmed, stopwords removed). The
    sentence is supported when, in that window,

    * at least ``GROUNDING_MIN_SUPPORT`` (0.8) of its content terms occur,
    * every number it states occurs (``1,000`` = ``1000``),
    * every negation (not, no, never, without, ...) and modal (must, may,
      should, required, ...) it uses occurs, and
    * if the single best-matching source sentence is negated, so is it.
    """
    terms = matching_terms(sentence)
    if not terms:
        return Grounding(False, 0.0, "no content terms")
    if _verbatim_unnegated(sentence, chunk_text):
        return Grounding(True, 1.0)
    source = split_sentences(chunk_text) or [chunk_text]
    best_support, best_window = -1.0, ""
    best_single_support, best_single = -1.0, ""
    for size in range(1, GROUNDING_WINDOW_SENTENCES + 1):
        for start in range(max(1, len(source) - size + 1)):
            window = " ".join(source[start:start + size])
            support = len(terms & matching_terms(window)) / len(terms)
            if support > best_support:
                best_support, best_window = support, window
            if size == 1 and support > best_single_support:
                best_single_support, best_single = support, window
    if best_support < GROUNDING_MIN_SUPPORT:
        missing = sorted(terms - matching_terms(best_window))[:5]
        return Grounding(False, best_support,
                         f"support {best_support:.2f} < {GROUNDING_MIN_SUPPORT} (missing {missing})")
    missing_numbers = _numbers(sentence) - _numbers(best_window)
    if missing_numbers:
        return Grounding(False, best_support, f"numbers not in source {sorted(missing_numbers)}")
    sentence_words, window_words = set(words(sentence)), set(words(best_window))
    missing_cues = (sentence_words & (NEGATION | _MODALS)) - window_words
    if missing_cues:
        return Grounding(False, best_support, f"negation/modal not in source {sorted(missing_cues)}")
    if (best_single_support >= GROUNDING_MIN_SUPPORT and set(words(best_single)) & NEGATION
            and not sentence_words & NEGATION):
        return Grounding(False, best_support, "source sentence is negated, answer is not")
    return Grounding(True, best_support)
