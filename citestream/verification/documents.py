"""Where a claim names the document a sentence comes from ("Under 21 CFR Part 820, ...", "According to the PIC/S GDP
aide-memoire, ...", "PI 044-1 applies to ...", "the QMSR"): those words say where the claim is stated, so a sentence
of that document need not hold them (issue 52).

A **mention** is a run of the claim's words, each a word of the document's file name, title or issuer, a word for a
document ("guidance", "program"…), a number of its file name, title or section heading, or "the/of/on/for/in", that
holds a **code** of the document (a file-name word with a digit, "Q9", "7356.008", "044-1"; a section number of the
sentence's heading, "820.1"; an acronym of the title or file name, "QMSR", "DQST"), or, opening with a capital or a
digit, a word for a document beside a word of its own name (file name or title; not its issuer or authority): "the
PIC/S GDP aide-memoire", "21 CFR Part 820". Words of the title alone ("drug products", "GDP inspection", "voluntary
guidance for GDP inspectors") are what a claim is about, not a mention. A name that is not the document's ends the
run, and a run that goes on into a capitalised word is none: "ICH Q8" is no mention of Q11, "the PIC/S GDP Guide" none
of the GDP aide-memoire, "Part 11" none of Part 820; those words are still looked for in the sentence, so a claim
naming another document is ``unclear``.

Codes with digits come from the file name and the section heading only, never from the title, which is read from the
first page and can be wrong ("ICH E10" for Q9): a title contributes words and acronyms.

A regulator's name ("MHRA", "FDA"; ``core.regulators``) names the document only as its issuer, never as a word or an
acronym of its file name or title: an upload's or inline text's issuer is left empty (``store.search.document_names``),
so an upload whose cover reads "Medicines and Healthcare products Regulatory Agency" is no MHRA document to a claim
(review54b, N6).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.regulators import canonical
from ..core.text_units import STOPWORDS, normalize, stem
from .terms import Term, _acronym_in

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*")
_BREAK = re.compile(r"[,;:!?]|\.(?:\s|$)")
DOCUMENT_NOUNS = frozenset("guidance guideline guidelines document program programme regulation regulations "
                           "aide-memoire cp part".split())
"""Words for a document: a mention without a code holds one, beside a word of the document's own name."""
SELF_NOUNS = DOCUMENT_NOUNS | frozenset(["section"])
"""How a sentence names its own document as a doer ("This document applies to ...")."""
_NOUN_KEYS = frozenset(stem(n) for n in DOCUMENT_NOUNS)
_LINKS = frozenset("the of on for in".split())
_PURE_NUMBER = re.compile(r"^\d+$")
# Each starts only where a run of digits or letters starts and never gives back what it took (possessive), so a
# hostile title or file name is read once (tests/core/test_bounds.py).
_NUMBER_CODE = re.compile(r"(?<!\d)\d++(?:-\d++)+|(?<!\d)\d++\.\d++")  # "044-1", "7356.008"
_SECTION_NUMBER = re.compile(r"(?<!\d)\d++(?:\.\d++)+")  # "820.1"
_HYPHENED_WORD = re.compile(r"(?<![A-Za-z])[A-Za-z]++(?:-[A-Za-z]++)+")  # "aide-memoire"


@dataclass(frozen=True)
class DocumentName:
    """What names one document: read from a grounding chunk's metadata (pdf, title, issuer, authority, section)."""

    words: frozenset[str]      # stems of its own name's words: file name and title, without stopwords
    codes: frozenset[str]      # lower-cased codes: file-name words with digits, section numbers
    numbers: frozenset[str]    # pure numbers of its file name, title and section heading
    labels: frozenset[str]     # stems of its issuer and authority
    initials: tuple[str, ...]  # file name and title as lower-cased words, for acronyms

    @classmethod
    def of(cls, pdf: str = "", title: str = "", issuer: str = "", authority: str = "",
           section: str = "") -> DocumentName:
        base = re.sub(r"\.pdf$", "", pdf, flags=re.I)
        file_parts = [p for p in re.split(r"[_\s]+", base) if p]
        # "pi-044-1-pics-gdp-aide-memoire": the codes are runs of hyphen parts holding a digit ("044-1")
        pieces = [q for p in file_parts for q in re.split(r"-", p) if q]
        # "21CFR", "Q8": split letters from digits for words, keep the whole for codes
        file_words = [w for p in pieces for w in re.findall(r"[A-Za-z]+|\d+(?:\.\d+)*", p)]
        codes = {p.lower() for p in pieces if re.search(r"\d", p) and re.search(r"[A-Za-z.]", p)}
        codes |= {m.group(0).lower() for p in file_parts for m in _NUMBER_CODE.finditer(p)}
        codes |= {t.lower() for t in _TOKEN.findall(section) if _SECTION_NUMBER.fullmatch(t)}
        title_words = [t for t in _TOKEN.findall(title) if not re.search(r"\d", t)]
        numbers = {w for w in file_words if _PURE_NUMBER.match(w)}
        numbers |= {t for t in _TOKEN.findall(f"{title} {section}") if _PURE_NUMBER.match(t)}
        own = [normalize(w) for w in file_words + title_words + [p for p in pieces if "-" in p]]
        words = {stem(w) for w in own if not _PURE_NUMBER.match(w) and w not in STOPWORDS and len(w) > 1}
        words |= {stem(normalize(p)) for p in _HYPHENED_WORD.findall(base)}  # aide-memoire
        labels = {stem(normalize(t)) for t in _TOKEN.findall(f"{issuer} {authority}".replace("/", " "))}
        initials = tuple(normalize(w) for w in file_words + title_words if not _PURE_NUMBER.match(w))
        return cls(frozenset(words), frozenset(codes), frozenset(numbers), frozenset(labels), initials)

    def is_code(self, token: str) -> bool:
        low = normalize(token)
        if low in self.codes:
            return True
        letters = [c for c in token if c.isalpha()]
        if len(letters) >= 3 and token.isupper() and token.isalpha():
            return _acronym_in(Term(token, stem(low), True), list(self.initials))
        return False


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    text: str
    keys: frozenset[str]    # stems of its words (what the term rule no longer asks of the sentence)
    words: frozenset[str]   # its words, lower-cased (how the parse names its doer)


def mentions(claim: str, name: DocumentName) -> list[Mention]:
    """The runs of ``claim`` that name the document ``name`` describes (see the module's docstring)."""
    out: list[Mention] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        while run and normalize(run[-1].group(0)) in _LINKS:
            run.pop()
        while run and normalize(run[0].group(0)) in _LINKS:
            run.pop(0)
        if run:
            toks = [m.group(0) for m in run]
            codes = sum(name.is_code(t) for t in toks)
            keys = {stem(normalize(_clean(t))) for t in toks}
            named = toks[0][:1].isupper() or toks[0][:1].isdigit()  # not "voluntary guidance for GDP"
            if codes or (named and keys & _NOUN_KEYS and (keys - _NOUN_KEYS) & name.words):
                out.append(Mention(run[0].start(), run[-1].end(), claim[run[0].start():run[-1].end()],
                                   frozenset(stem(normalize(_clean(t))) for t in toks),
                                   frozenset(normalize(_clean(t)) for t in toks)))
        run.clear()

    last = 0
    for m in _TOKEN.finditer(claim):
        if run and _BREAK.search(claim, last, m.start()):
            close()
        token = _clean(m.group(0))
        if _fits(token, name, bool(run)):
            run.append(m)
        elif token[:1].isupper() and run and not _BREAK.search(claim, last, m.start()):
            run.clear()  # the run goes on into another name: "the PIC/S GDP Guide" is not the GDP aide-memoire
        else:
            close()
        last = m.end()
    close()
    return out


def _fits(token: str, name: DocumentName, in_run: bool) -> bool:
    """Whether ``token`` may be part of a mention of ``name`` (a link word only inside a run)."""
    low = normalize(token)
    key = stem(low)
    if canonical(token) is not None:  # who issued it is read from the issuer alone, never from its file or title
        return key in name.labels
    return (name.is_code(token) or key in name.words or key in name.labels or key in _NOUN_KEYS
            or (low in _LINKS and in_run) or (_PURE_NUMBER.match(low) is not None and low in name.numbers))


def _clean(token: str) -> str:
    token = token.replace("’", "'")
    return token[:-2] if token.lower().endswith("'s") else token


def without(claim: str, found: list[Mention]) -> str:
    """The claim with its mentions blanked (same length elsewhere): what the numbers check reads. One pass."""
    parts, at = [], 0
    for m in sorted(found, key=lambda m: m.start):
        start = max(m.start, at)
        parts += [claim[at:start], " " * max(0, m.end - start)]
        at = max(at, m.end)
    return "".join(parts) + claim[at:]

