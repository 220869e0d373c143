"""Conflicts the offline verifier looks for in the supporting sentence: negation, direction, swapped roles."""

from __future__ import annotations

import re
from itertools import pairwise

from ..core.clauses import CONDITION_MARKS
from ..core.text_units import STOPWORDS
from .synonyms import antonymous, synonymous
from .terms import NEGATIONS, claim_terms, evidence_keys, fuzzy, in_plain_order_words, normalized_words


# Word roots with opposite direction; a claim with one side and evidence with only the other conflicts.
ANTONYM_ROOTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("increas", "rais", "rise", "rose", "elevat", "higher", "greater", "gain"),
     ("decreas", "reduc", "lower", "lessen", "declin", "drop", "fall", "fell", "diminish")),
    (("superior", "better", "outperform"), ("inferior", "worse", "underperform")),
    (("improv",), ("worsen", "deteriorat")),
    (("more",), ("less", "fewer")),
    (("before", "prior"), ("after", "following")),
    (("require", "mandatory", "must", "obligat"), ("optional", "voluntary")),
    (("allow", "permit", "accept"), ("prohibit", "forbid", "reject", "disallow")),
    (("includ",), ("exclud",)),
    (("maximum", "upper"), ("minimum", "lower")),
    (("written",), ("oral", "verbal")),
    (("same", "identical"), ("different", "differ")),
)

# Words that make a relation asymmetric: what stands on each side matters.
ASYMMETRY_CUES = ("over", "than", "versus", "vs", "instead", "rather", "compared", "relative", "replac")


_NON = re.compile(r"(?:non-)+")


_LEAVE_OUT = ("exclud", "omit")
"""Verbs that say "not include": "should not exclude questions" asserts what "should not submit questions" denies."""


def _negation_cues(words: list[str], i: int) -> int:
    """"not", "no", …; a word that negates by its prefix, once a prefix ("non-binding" says "not binding");
    "apart from", "exclude", "omit" (what they set apart is denied). "Whether or not" offers an alternative, it
    negates nothing."""
    w = words[i]
    if w == "not":
        return words[i - 1:i] != ["or"]
    prefixes = _NON.match(w)
    cue = (w in NEGATIONS or w.startswith(_LEAVE_OUT) or (w == "from" and words[i - 1:i] == ["apart"])
           or _only_if(words, i))
    return (len(prefixes.group(0)) // 4 if prefixes else 0) + cue


def _only_if(words: list[str], i: int) -> bool:
    """"X only if Y" says "not X unless Y"."""
    return words[i] == "only" and bool(CONDITION_MARKS.intersection(words[i + 1:i + 2]))


def negated(text: str) -> bool:
    """Odd number of negation cues: the sentence asserts the opposite of its bare content."""
    words = normalized_words(text)
    return sum(_negation_cues(words, i) for i in range(len(words))) % 2 == 1


_CLAUSE = re.compile(r"([,;:()]|\bor\b(?!\s+not\b)|\b(?:but|whereas|while|although|unless|except|because)\b)",
                     re.IGNORECASE)


def _about(keys: set[str], terms: list) -> bool:
    """The clause holds a claim term, in any form of its word ("investigate" in "another investigation")."""
    return any(t.key in keys or any(fuzzy(t.key, k) for k in keys) for t in terms)


def negated_where(sentence: str, claim: str) -> bool:
    """Polarity of the clauses that carry the claim's terms (a 'does not' elsewhere in the sentence is not about it).
    A clause "except …" sets apart what it names: it counts as one negation."""
    terms = claim_terms(claim)
    pieces = _CLAUSE.split(sentence)
    clauses = [(c, pieces[i - 1].lower() == "except" if i else False)
               for i, c in enumerate(pieces) if i % 2 == 0 and c and c.strip()]
    about = [(c, excepted) for c, excepted in clauses if _about(set(evidence_keys(c)), terms)] or clauses
    return (negated(" ".join(c for c, _ in about)) + sum(excepted for _, excepted in about)) % 2 == 1


def _with_root(words: set[str], roots: tuple[str, ...]) -> set[str]:
    return {w for w in words if w.startswith(roots)}


def _direction_words(text: str) -> set[str]:
    return set(normalized_words(in_plain_order_words(text)))


def direction_conflict(claim: str, evidence: str) -> str | None:
    """The claim has a word of one direction the evidence never uses, where the evidence has a word of the opposite
    direction the claim never uses: "send FDA the optional notification" against "submit the required notification"
    (both say "must": the words they share decide nothing)."""
    cw, ew = _direction_words(claim), _direction_words(evidence)
    for left, right in ANTONYM_ROOTS:
        for mine, other in ((left, right), (right, left)):
            if _with_root(cw, mine) - ew and _with_root(ew, other) - cw and not _with_root(ew, mine):
                return f"claim says {'/'.join(mine)}… where the evidence says {'/'.join(other)}…"
    return None


def antonym_conflict(claim: str, evidence: str) -> str | None:
    """A word of the claim the evidence never uses where the evidence has its WordNet antonym the claim never uses:
    "issued at the end of the fiscal year" against "at the beginning" (the model reads the two as one statement,
    0.86). Only content words: the negation, order and restrictor checks read the function words."""
    mine, theirs = _content_words(claim), _content_words(evidence)
    for word in sorted(mine - theirs):
        for other in sorted(theirs - mine):
            if antonymous(word, other) and not any(synonymous(word, e) for e in theirs):
                return f"claim says {word} where the evidence says {other}"
    return None


def _content_words(text: str) -> set[str]:
    return {w for w in normalized_words(text) if w.isalpha() and len(w) > 2 and w not in STOPWORDS}


def _split_at_cue(text: str) -> tuple[str, list[str], list[str]] | None:
    words = normalized_words(text)
    for i, w in enumerate(words):
        for cue in ASYMMETRY_CUES:
            if w.startswith(cue) and (cue != "over" or w == "over"):
                return cue, words[:i], words[i + 1:]
    return None


def swapped_roles(claim: str, evidence: str) -> str | None:
    """'warfarin superior over apixaban' against 'apixaban superior over warfarin': same words, roles swapped."""
    c, e = _split_at_cue(claim), _split_at_cue(evidence)
    if not c or not e or c[0] != e[0]:
        return None
    names = {t.key for t in claim_terms(claim)}
    c_left = set(evidence_keys(" ".join(c[1]))) & names
    c_right = set(evidence_keys(" ".join(c[2]))) & names
    e_left = set(evidence_keys(" ".join(e[1])))
    e_right = set(evidence_keys(" ".join(e[2])))
    moved_right = (c_left - e_left) & e_right
    moved_left = (c_right - e_right) & e_left
    if moved_right and moved_left:
        return f"roles swapped around '{c[0]}': {sorted(moved_left)} vs {sorted(moved_right)}"
    return None


_EXCEPTION = re.compile(r"\b(?:unless|except|only\s+(?:if|when|where|after)|provided\s+that)\b", re.IGNORECASE)
_DESPITE = re.compile(r"\b(?:even\s+(?:if|when|where|after|though|once)|regardless|irrespective|whether\s+or\s+not)\b",
                      re.IGNORECASE)


def exception_conflict(claim: str, evidence: str) -> str | None:
    """The evidence makes an exception ("non-binding unless declared a legal standard") that the claim denies ("stays
    non-binding even after it is declared one"). Can only refuse."""
    if _DESPITE.search(claim) and _EXCEPTION.search(evidence) and not _EXCEPTION.search(claim):
        return "the claim says 'even/regardless' where the evidence makes an exception"
    return None


# A claim that narrows or widens who or what a rule applies to, or bounds a value from the other side, is not what
# the evidence says: "every product" where the text says "certain products", "only major deviations" where it says
# "any deviation", "at most 99.97 percent" where it says "at least", "within" where it says "outside".
_ONLY = frozenset("only solely exclusively".split())
_SINGLE = frozenset("single sole alone".split())
_UNIVERSAL = frozenset("all every each any always entire whole".split())
_PARTIAL = frozenset("some certain representative selected particular subset few several".split())
_INSIDE = frozenset("within inside".split())
_OUTSIDE = frozenset("outside beyond".split())
_RESTRICTOR_WORDS = _ONLY | _UNIVERSAL | _PARTIAL | _INSIDE | _OUTSIDE
_OPPOSITE_BOUNDS = {"le": ("ge", "gt"), "lt": ("ge", "gt"), "ge": ("le", "lt"), "gt": ("le", "lt")}


def _word_set(words: list[str]) -> set[str]:
    out_of = any(a == "out" and b == "of" for a, b in pairwise(words))
    return set(words) | ({"outside"} if out_of else set())


def _restricts(words: list[str]) -> bool:
    """'only' restricts what the claim is about, not a relative clause's verb ("a system that only manages"), nor a
    condition ("only if", read as "not … unless" by the negation checks)."""
    return any(w in _ONLY and (i == 0 or words[i - 1] not in ("that", "which", "who")) and not _only_if(words, i)
               for i, w in enumerate(words))


def restrictor_conflict(claim: str, evidence: str) -> str | None:
    """The claim changes a restrictor of the evidence: adds "only", swaps a universal for a partial quantifier (or
    back), "within" for "outside", or bounds the same value from the other side. A backstop that can only refuse:
    the judge may say a sentence states the claim, never overrule this. The evidence is read only for what the
    claim holds (a claim without a restrictor or a bound costs a look at the claim alone)."""
    from .numbers import quantities

    claim_words = normalized_words(claim)
    cw = _word_set(claim_words)
    if cw & _RESTRICTOR_WORDS:
        ew = _word_set(normalized_words(evidence))
        if _restricts(claim_words) and not ew & (_ONLY | _SINGLE):
            return "the claim restricts with 'only' where the evidence does not"
        for mine, other in ((_UNIVERSAL, _PARTIAL), (_PARTIAL, _UNIVERSAL), (_INSIDE, _OUTSIDE), (_OUTSIDE, _INSIDE)):
            if cw & mine and not cw & other and ew & other and not ew & mine:
                said, says = "/".join(sorted(cw & mine)), "/".join(sorted(ew & other))
                return f"the claim says {said} where the evidence says {says}"
    bounded = [q for q in quantities(claim, claim=True) if q.bound in _OPPOSITE_BOUNDS]
    if not bounded:
        return None
    found = quantities(evidence)
    for q in bounded:
        same = [e for e in found if e.value == q.value and e.unit == q.unit]  # the evidence's mentions of the value
        flipped = [e for e in same if e.bound in _OPPOSITE_BOUNDS[q.bound or ""]]
        if flipped and not any(e.bound == q.bound for e in same):
            return f"the claim bounds {q.text!r} from the other side ({flipped[0].text!r})"
    return None
