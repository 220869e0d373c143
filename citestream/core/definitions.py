"""A question that asks what a term is, and the unit that defines it.

Asked "How does ICH Q9 define a hazard?", the judge ranks sentences that use the term ("It consists of the
identification of hazards ...") above the glossary entry that defines it ("Hazard: The potential source of harm").
A definition has a form any reader knows: the term, then "is", "are", "means", "refers to" or a colon. So the term
is read from the asking sentence ("what is a X", "how does D define X", "what does X mean") and a unit defines it
when it opens with that term (or the acronym the question's reading gives it) in that form. Plain string work on a
bounded sentence: no pattern that can backtrack.
"""

from __future__ import annotations

import re
from functools import lru_cache

_OPENERS = ("what is ", "what are ", "what's ")
_BOUNDARIES = (" in ", " under ", " according to ", " per ", " for ", " within ", " as used ", " as defined ",
               " as described ", " in the context ", ", ")
_CLAUSES = frozenset("that which who whom whose when where if whether".split())
_ARTICLES = ("a ", "an ", "the ")
_COPULAS = (" is ", " are ", " means ", " mean ", " refers to ", " refer to ", ": ", " – ", " — ", " - ",
            " shall mean ", " is defined as ", " are defined as ")
_ACRONYM = re.compile(r"\(([a-z][a-z0-9&/-]{1,11})\)")
_MARKER = re.compile(r"^(?:\(?[0-9ivx]{1,4}(?:\.[0-9]{1,3}){0,4}[.)]?\s+|\([a-z]\)\s+|[•o▪-]\s+)")
MAX_TERM_WORDS = 6


def _without_article(text: str) -> str:
    for article in _ARTICLES:
        if text.startswith(article):
            return text[len(article):]
    return text


@lru_cache(maxsize=4096)
def asked_term(asking: str) -> tuple[str, ...]:
    """The term an asking sentence wants defined, with its acronym when the reading spelled one out ("remote
    regulatory assessment (RRA)"), singular first; () when it asks for something else."""
    text = " ".join(asking.lower().split())[:300].rstrip(" ?")
    if text.startswith(_OPENERS):
        rest = text.split(" ", 2)[2] if not text.startswith("what's ") else text[len("what's "):]
    elif text.startswith("how does ") and " define " in text:
        rest = text.split(" define ", 1)[1]
    elif text.startswith("what does ") and text.endswith(" mean"):
        rest = text[len("what does "):-len(" mean")]
    else:
        return ()
    if any(word in _CLAUSES for word in rest.split()):  # "what is the procedure that ...": a specific one, no term
        return ()
    for boundary in _BOUNDARIES:
        rest = rest.split(boundary, 1)[0]
    acronyms = _ACRONYM.findall(rest)
    term = " ".join(_without_article(_ACRONYM.sub("", rest).strip()).split())
    if not term or len(term.split()) > MAX_TERM_WORDS or not term[0].isalnum():
        return ()
    plural = term.endswith("s") and not term.endswith("ss") and len(term) > 4  # not an acronym's "oos"
    forms = [term[:-1], term] if plural else [term]
    return tuple(dict.fromkeys([*forms, *acronyms[:1]]))


def defines(unit: str, terms: tuple[str, ...]) -> bool:
    """Does ``unit`` open by defining one of ``terms`` ("Hazard: The potential source of harm", "An RRA is an
    examination ...", "Manufacturer means any person who ...")?"""
    if not terms:
        return False
    text = _without_article(_MARKER.sub("", " ".join(unit.lower().split())[:200]))
    for term in terms:
        if not text.startswith(term):
            continue
        rest = text[len(term):]
        rest = rest[1:] if rest.startswith("s ") or rest.startswith("s:") else rest  # "Excipients are ..."
        if rest.startswith(" ("):  # "Target product profile (TPP) is ..."
            close = rest.find(")", 0, 24)
            rest = rest[close + 1:] if close > 0 else rest
        if rest.startswith(_COPULAS):
            return True
    return False
