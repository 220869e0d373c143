"""The default claim judge: the relevance model finds the sentences that may state the claim; the claim passes only
if one of them agrees with it on who does what, polarity, every number and every name. Fail closed.

* Every sentence unit of the pack is scored with the claim (the relevance model's blend at the claim weight).
* The best unit must reach ``support_threshold``; below it nothing in the pack states the claim: ``unclear``,
  unless the best unit, from ``CONFLICT_FLOOR``, states a clause of the claim with another doer or the opposite
  polarity (``structure``): ``fail`` ("… is selected by the applicant" against "FDA selects …" scores 0.28).
* The ``CANDIDATES`` best units above the threshold are read in score order. A unit that states a clause of the
  claim with another doer or the opposite polarity (``structure``) makes it ``fail``; so does any conflict on the
  best unit (a number of the same unit that disagrees, a negation on one side only, an opposite direction,
  swapped roles around "than"). A unit with such a conflict elsewhere is passed over.
* The first unit without a conflict that states all of the claim passes it: every number, every restrictor
  ("only", "all"), every name (acronyms, capitalised names, section references such as 505(j): exactly, in the
  unit or in the name of its document, "ICH Q9" for a sentence of Q9_Guideline.pdf; words that mention the unit's
  own document, "Under 21 CFR Part 820", are not asked at all: ``documents.mentions``), the claim's doers and
  subjects in the unit itself, the words that restrict those subjects in the unit or its section's heading ("the
  pilot scale process" is not "the commercial scale process": ``clauses.subject_qualifiers``), and the other words
  by stem — unless the model judges the unit a restatement (``paraphrase_threshold``): then the other words may be
  the unit's own ("expects … to arrive" for "anticipates … will be submitted"). Otherwise ``unclear``. Only ``pass``
  carries the unit quoted as evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from ..core.clauses import SELF_REFERENCES, subject_qualifiers
from ..models.retrieval import GroundingChunk, GroundingPack
from ..models.verdicts import Claim, ClaimVerdict, EvidenceRef
from ..core.regulators import canonical
from ..core.text_units import file_name_words, sentence_units, stem, words
from .documents import DocumentName, Mention, mentions, without
from .checks import (antonym_conflict, direction_conflict, exception_conflict, negated_where, restrictor_conflict,
                     swapped_roles)
from .numbers import check_numbers
from .rule_judge import in_context
from .structure import PARTIES, participants, structural_conflict
from .terms import claim_terms, missing_terms

SUPPORT_THRESHOLD = 0.3
PARAPHRASE_THRESHOLD = 0.6
"""Chosen with the judge on the four claims dev sets (docs/experiments/2026-11-27-judge.md): no false pass on any."""
CANDIDATES = 3
CONFLICT_FLOOR = 0.15
"""Below the support threshold, from this score, the best unit is still read for a structural conflict (it can only
fail the claim, never pass it)."""


@dataclass(frozen=True)
class Conflict:
    why: str
    structural: bool
    """Read from who does what in one clause: a contradiction wherever the sentence stands among the candidates
    (before one that passes). The other checks read the whole sentence, so they only bar it (and decide ``fail``
    on the best one)."""


def conflict(claim: str, sentence: str, authority: str, named: list[Mention], rest: str) -> Conflict | None:
    """``named``: where the claim names the sentence's own document, and ``rest`` the claim without those words
    (``documents.without``); its numbers ("21 CFR Part 820") are no quantities, and a doer among its words is the
    document ("PI 044-1 applies" for "This document applies")."""
    numbers = check_numbers(rest, sentence)
    if numbers.conflicting:
        return Conflict("numbers disagree with the evidence: " + ", ".join(q.text for q in numbers.conflicting), False)
    structural = structural_conflict(claim, sentence, authority, frozenset(w for m in named for w in m.words))
    if structural:
        return Conflict(structural, True)
    if negated_where(claim, claim) != negated_where(sentence, claim):
        return Conflict("negation differs: the evidence asserts the opposite", False)
    other = (direction_conflict(claim, sentence) or antonym_conflict(claim, sentence)
             or restrictor_conflict(claim, sentence)
             or exception_conflict(claim, sentence) or swapped_roles(claim, sentence))
    return Conflict(other, False) if other else None


class RelevanceJudge:
    name = "relevance-v2"

    def __init__(self, relevance, support_threshold: float = SUPPORT_THRESHOLD,
                 paraphrase_threshold: float = PARAPHRASE_THRESHOLD):
        self.relevance = relevance
        self.support_threshold = support_threshold
        self.paraphrase_threshold = paraphrase_threshold

    def judge(self, claim: Claim, pack: GroundingPack) -> ClaimVerdict:
        units: list[tuple[str, GroundingChunk, str]] = []
        holders: dict[str, list[GroundingChunk]] = {}
        for chunk in pack.chunks:
            for unit, context in in_context(sentence_units(chunk.text)):
                if len(words(unit)) >= 4 and unit not in holders:
                    units.append((unit, chunk, context))
                holders.setdefault(unit, []).append(chunk)
        if not units:
            return self._verdict(claim, "unclear", "no grounding sentences: nothing can support the claim")
        scores = self.relevance.score(claim.text, [u for u, _, _ in units])
        order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
        if scores[order[0]] < self.support_threshold:
            unit, chunk, _ = units[order[0]]
            found = (conflict(claim.text, unit, _authority(chunk), *_own_names(claim.text, holders[unit]))
                     if scores[order[0]] >= CONFLICT_FLOOR else None)
            if found and found.structural:
                return self._verdict(claim, "fail", found.why, [EvidenceRef(chunkId=chunk.chunk_id, quote=unit)])
            return self._verdict(claim, "unclear", f"no sentence states the claim (best support "
                                                   f"{scores[order[0]]:.2f} < {self.support_threshold})")
        first_gap: list[str] = []
        read = [i for i in order[:CANDIDATES] if scores[i] >= self.support_threshold]
        owned = cache(lambda i: _own_names(claim.text, holders[units[i][0]]))  # read only for candidates reached
        conflict_at = cache(lambda i: conflict(claim.text, units[i][0], _authority(units[i][1]), *owned(i)))
        for rank, i in enumerate(read):
            unit, chunk, context = units[i]
            rest = owned(i)[1]
            terms = claim_terms(rest)
            found = conflict_at(i)
            if found and (rank == 0 or found.structural):
                return self._verdict(claim, "fail", found.why, [EvidenceRef(chunkId=chunk.chunk_id, quote=unit)])
            if found:
                continue
            parties = participants(claim.text, _authority(chunk))
            qualifiers = set(map(stem, subject_qualifiers(claim.text))) - parties
            said = [t for t in terms if t.exact or t.key in parties | qualifiers | PARTIES
                    or scores[i] < self.paraphrase_threshold]  # a party is never the sentence's own word
            missing = [t.raw for t in missing_terms([t for t in said if t.key in parties], _naming(context, chunk))]
            section = _section(chunk)  # a heading restricts what its sentences are about
            missing += [t.raw for t in missing_terms([t for t in said if t.key in qualifiers], f"{context} {section}")]
            names = " ".join(_document_name(c) for c in holders[unit])  # every document saying it
            missing += [t.raw for t in missing_terms([t for t in said if t.key not in parties | qualifiers],
                                                     f"{context} {names}")]
            missing += [q.text for q in check_numbers(rest, context).unsupported]
            literal = (_literal_conflict(terms, [j for j in read if j != i], conflict_at, units)
                       if len(said) < len(terms) else None)
            if not missing and literal is not None:
                (stated, holder, _), why = units[literal[0]], literal[1].why
                return self._verdict(claim, "fail", f"{why} (the sentence in the claim's own words: {holder.chunk_id})",
                                     [EvidenceRef(chunkId=holder.chunk_id, quote=stated)])
            if not missing:
                return self._verdict(claim, "pass", f"stated by {chunk.chunk_id} (support {scores[i]:.2f})",
                                     [EvidenceRef(chunkId=chunk.chunk_id, quote=context)])
            first_gap = first_gap or missing
        why = ("the closest sentences do not state: " + ", ".join(first_gap) if first_gap
               else "the closest sentences other than the best one conflict with the claim")
        return self._verdict(claim, "unclear", why)

    @staticmethod
    def _verdict(claim: Claim, verdict: str, why: str, evidence: list[EvidenceRef] | None = None) -> ClaimVerdict:
        return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict=verdict, evidence=evidence or [],
                            rationale=why)


def _literal_conflict(terms: list, others: list[int], conflict_at: Callable[[int], Conflict | None],
                      units: list[tuple[str, GroundingChunk, str]]) -> tuple[int, Conflict] | None:
    """A restatement may pass on a unit that lacks some of the claim's words, unless another candidate (``others``)
    states every word of the claim's ``terms`` and conflicts with it: "Within 60 days, FDA agreed to grant or deny 90
    percent of meeting requests" reads as a restatement of "... conduct 90 percent of meetings within 60 days", while
    the sentence before it grants or denies the requests "within 30 days". The sentence in the claim's own words
    decides: that candidate and its conflict, or None. A candidate's conflict is read only once it states the words."""
    worded = [t for t in terms if not any(c.isdigit() for c in t.raw)]  # a number is what the conflict is about
    for j in others:
        _, chunk, context = units[j]
        if not missing_terms(worded, f"{context} {_section(chunk)}") and (found := conflict_at(j)) is not None:
            return j, found
    return None


def _section(chunk: GroundingChunk) -> str:
    return str(chunk.metadata.get("section") or "")


def _own_names(claim: str, holders: list[GroundingChunk]) -> tuple[list[Mention], str]:
    """Where the claim names the unit's own document (any document stating the unit), and the claim without those
    words: they are not asked of the unit."""
    named = [m for c in holders for m in mentions(claim, _document(c))]
    return named, without(claim, named)


def _authority(chunk: GroundingChunk) -> str:
    return str(chunk.metadata.get("authority") or "")


def _naming(context: str, chunk: GroundingChunk) -> str:
    """Where the claim's parties must be named: the sentence itself, where "we" and "the Agency" are the document's
    authority. A document's name says what it is about, not who does what in it."""
    said = {w.lower() for w in words(context)}
    return f"{context} {_authority(chunk)}" if said & SELF_REFERENCES else context


def _document(chunk: GroundingChunk) -> DocumentName:
    """The unit's document as a claim may name it: file name, title and issuer (``qa.retrieve.grounding_pack``
    adds the last two from ``documents``), authority, and the unit's section heading (a section number)."""
    meta = chunk.metadata
    return DocumentName.of(*(str(meta.get(k) or "") for k in ("pdf", "title", "issuer", "authority", "section")))


def _document_name(chunk: GroundingChunk) -> str:
    """How a claim may name the document a sentence comes from: its file name's words and its authority. A
    sentence several documents of the pack state word for word is read once, with every one of their names. A
    regulator's name in the file name counts only when it is the document's issuer or authority: an upload saved as
    "mhra-rinsing.pdf" is not the MHRA's (review54b, N6)."""
    meta = chunk.metadata
    issued = {canonical(str(meta.get(k) or "")) for k in ("issuer", "authority")} - {None}
    kept = [w for w in file_name_words(str(meta.get("pdf") or "")).split() if canonical(w) in issued | {None}]
    return f"{' '.join(kept)} {meta.get('authority') or ''}"
