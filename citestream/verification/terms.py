"""Claim terms and the fuzzy matching the offline verifier uses to find them in evidence.

Case matters here (``ALL`` the leukemia is not ``all`` the stopword; ``AFib`` is
an acronym), so this tokenizer reads the raw text rather than ``text.words``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.clauses import CONDITION_MARKS
from ..core.text_units import STOPWORDS, normalize, stem
from .synonyms import synonymous

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*")
# A section or paragraph reference: "505(j)", "314.94(a)(12)". Its letters are what tell 505(j) from 505(c).
# Never started inside a dotted number ("1." before it): from there it would read to the end of the number again,
# once per part (0.2 s for a 4,000-character claim of "1.1.1...").
_IDENTIFIER = re.compile(r"\b(?<!\d\.)\d+(?:\.\d+)*(?:\([A-Za-z0-9]{1,4}\))+")
_PURE_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
# Hedges and fillers a claim may add without changing what it asserts.
HEDGES = frozenset("approximately about around roughly nearly almost generally typically usually".split())
# Stopwords that restrict what a claim asserts: 'only sterile processes' is not 'sterile processes'.
RESTRICTORS = frozenset("only all every always".split())
ORDER = frozenset("before after prior earlier later".split())
"""Which comes first: a restatement may not drop or change it ("issued after the group concurs" is not stated by
"concurred by the group, is issued", which reads the same with "before")."""
UNIVERSAL = frozenset("all every each".split())
"""One quantifier in three words: a claim's "every strength" is stated by "all strengths"."""
NEGATIONS = frozenset(
    "no not never none neither nor without cannot can't don't doesn't isn't aren't wasn't weren't won't "
    "shouldn't mustn't needn't hasn't haven't didn't".split()
)
"""Read by the negation checks, not asked as words: "none of the tests needs" is stated by "no test requires"."""


@dataclass(frozen=True)
class Term:
    raw: str      # as written
    key: str      # normalised, stemmed
    named: bool   # an acronym, a capitalised name or a token with digits: must be matched exactly

    @property
    def exact(self) -> bool:
        """A name or a restrictor: a restatement may not drop or change it ("only sterile" is not "sterile")."""
        return self.named or self.raw.lower() in RESTRICTORS | ORDER


def _clean(token: str) -> str:
    token = token.replace("’", "'")
    return token[:-2] if token.lower().endswith("'s") else token


def tokens(text: str) -> list[str]:
    return [_clean(t) for t in _TOKEN.findall(text)]


def normalized_words(text: str) -> list[str]:
    """The text's tokens, each normalized: what the conflict checks and the term search compare."""
    return [normalize(t) for t in tokens(text)]


def _is_named(token: str, first: bool) -> bool:
    letters = [c for c in token if c.isalpha()]
    if any(c.isdigit() for c in token):
        return True
    if len(letters) >= 2 and sum(c.isupper() for c in letters) >= 2:
        return True  # ALL, AFib, CAR-T, DOACs
    return token[:1].isupper() and not first


def identifiers(text: str) -> list[str]:
    """Section references, lower-cased: matched exactly, like names."""
    return [m.group(0).lower() for m in _IDENTIFIER.finditer(text)]


def claim_terms(text: str) -> list[Term]:
    """Meaning-bearing terms of a claim; pure numbers are left to the numeric check, section references
    (``identifiers``) are names."""
    out: list[Term] = [Term(ident, ident, True) for ident in dict.fromkeys(identifiers(text))]
    seen: set[str] = {t.key for t in out}
    toks = tokens(text)
    for i, tok in enumerate(toks):
        low = normalize(tok)
        if _PURE_NUMBER.match(low) or low in HEDGES:
            continue
        after = normalize(toks[i + 1]) if i + 1 < len(toks) else ""
        if low in NEGATIONS or (low == "only" and after in CONDITION_MARKS):
            continue  # polarity, read by the negation checks ("only if" as "not … unless")
        if low in ("least", "most") and i and normalize(toks[i - 1]) == "at" and _PURE_NUMBER.match(after):
            continue  # "at least 15": a bound, read by the number checks ("a minimum of 15")
        upper_acronym = tok.isupper() and len(tok) >= 2
        if (low in STOPWORDS and not upper_acronym and low not in RESTRICTORS | ORDER) or len(low) < 2:
            continue
        key = stem(low)
        if key not in seen:
            seen.add(key)
            out.append(Term(tok, key, _is_named(tok, first=(i == 0))))
    return out


def evidence_keys(text: str) -> list[str]:
    """Every evidence token, normalised and stemmed, with hyphenated tokens also split into parts."""
    keys: list[str] = []
    for tok in tokens(text):
        low = normalize(tok)
        keys.append(stem(low))
        if "-" in low:
            keys.extend(stem(p) for p in low.split("-") if p)
    return keys + identifiers(text)


def fuzzy(a: str, b: str) -> bool:
    """One word in two forms: the same stem, or one a prefix of five letters or more of the other."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 5 and long_.startswith(short)


def _acronym_in(term: Term, evidence_words: list[str]) -> bool:
    """``AFib`` ⇒ atrial fibrillation, ``DOACs`` ⇒ direct oral anticoagulants: segments prefix consecutive words."""
    raw = term.raw.rstrip("s") if term.raw.endswith("s") and term.raw[:-1].isupper() else term.raw
    if not raw.isalpha() or sum(c.isupper() for c in raw) < 2:
        return False
    segments = [s.lower() for s in re.findall(r"[A-Z][a-z]*", raw)]
    if not segments or "".join(segments) != raw.lower():
        return False
    content = [w for w in evidence_words if w not in STOPWORDS]
    for start in range(len(content) - len(segments) + 1):
        if all(content[start + j].startswith(seg) for j, seg in enumerate(segments)):
            return True
    return False


def term_found(term: Term, keys: list[str], evidence_words: list[str]) -> bool:
    if term.raw.lower() in UNIVERSAL:
        return any(w in UNIVERSAL for w in evidence_words)
    if term.named:
        # names and acronyms: exact (stemmed) match, hyphen parts, or an expanded acronym
        if term.key in keys:
            return True
        parts = [stem(p) for p in term.key.split("-") if p]
        if len(parts) > 1 and all(p in keys for p in parts):
            return True
        return _acronym_in(term, evidence_words)
    if any(fuzzy(term.key, k) for k in keys):
        return True
    parts = [stem(p) for p in term.key.split("-") if p]
    if len(parts) > 1 and all(any(fuzzy(p, k) for k in keys) for p in parts):
        return True
    word = term.raw.lower()
    return word.isalpha() and any(synonymous(word, w) for w in evidence_words if w.isalpha() and w not in STOPWORDS)


_ORDER_PHRASES = ((re.compile(r"\bin advance of\b", re.IGNORECASE), "before"),
                  (re.compile(r"\bsubsequent to\b", re.IGNORECASE), "after"))
"""Phrases that say which comes first in words no root list can hold ("advance" is also "advanced")."""


def in_plain_order_words(text: str) -> str:
    """"in advance of" as "before", "subsequent to" as "after"."""
    for phrase, word in _ORDER_PHRASES:
        text = phrase.sub(word, text)
    return text


def missing_terms(terms: list[Term], evidence: str) -> list[Term]:
    evidence = in_plain_order_words(evidence)
    keys = evidence_keys(evidence)
    ev_words = normalized_words(evidence)
    return [t for t in terms if not term_found(t, keys, ev_words)]

