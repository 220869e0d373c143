"""The deterministic, offline judge: a claim passes only when one sentence of one chunk states all of it.

Fail closed: every claim term (names and acronyms exactly, other words by stem)
must appear in the supporting sentence; every number must be implied by a
number of the same unit there; negation, direction and the roles around
'over'/'than' must agree. A stated conflict is ``fail``; anything less than full
support is ``unclear``; nothing without evidence is ever ``pass``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models.retrieval import GroundingChunk, GroundingPack
from ..models.verdicts import Claim, ClaimVerdict, EvidenceRef
from ..core.text_units import normalize, split_sentences
from .checks import direction_conflict, negated, negated_where, restrictor_conflict, swapped_roles
from .numbers import check_numbers
from .terms import Term, claim_terms, missing_terms, tokens

_ANAPHORA = frozenset("it its this these those they their such both".split())


def _anaphoric(sentence: str) -> bool:
    """Starts with a pronoun or 'the <common noun>': its subject is in the sentence before."""
    toks = tokens(sentence)
    if not toks:
        return False
    first = normalize(toks[0])
    return first in _ANAPHORA or (first == "the" and len(toks) > 1 and toks[1][:1].islower())


@dataclass(frozen=True)
class Span:
    chunk: GroundingChunk
    sentence: str   # the sentence whose polarity and numbers count
    context: str    # the sentence, with the one before it when it opens with an anaphor
    missing: list[Term]


def in_context(sentences: Sequence[str]) -> list[tuple[str, str]]:
    """(sentence, context): the context is the sentence, with the one before it when it opens with an anaphor."""
    return [(s, f"{sentences[i - 1]} {s}" if i > 0 and _anaphoric(s) else s) for i, s in enumerate(sentences)]


def spans(chunk: GroundingChunk, terms: list[Term]) -> list[Span]:
    return [Span(chunk, sentence, context, missing_terms(terms, context))
            for sentence, context in in_context(split_sentences(chunk.text) or [chunk.text])]


def best_span(claim: str, pack: GroundingPack) -> tuple[Span | None, list[Term]]:
    terms = claim_terms(claim)
    best: Span | None = None
    for chunk in pack.chunks:  # highest score first: ties keep the better-ranked chunk
        for span in spans(chunk, terms):
            if best is None or len(span.missing) < len(best.missing):
                best = span
    return best, terms


class OfflineJudge:
    name = "offline-v1"

    def judge(self, claim: Claim, pack: GroundingPack) -> ClaimVerdict:
        def verdict(v: str, why: str, span: Span | None = None) -> ClaimVerdict:
            evidence = [EvidenceRef(chunkId=span.chunk.chunk_id, quote=span.context)] if span else []
            return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict=v, evidence=evidence, rationale=why)

        if not pack.chunks:
            return verdict("unclear", "no grounding chunks: nothing can support the claim")
        span, terms = best_span(claim.text, pack)
        if span is None or (not terms and not check_numbers(claim.text, "").unsupported):
            return verdict("unclear", "the claim has no terms to look for")
        conflict = conflicts(claim.text, span)
        if conflict:
            return verdict("fail", conflict, span)
        if span.missing:
            names = ", ".join(t.raw for t in span.missing)
            return verdict("unclear", f"no sentence in the grounding states: {names}")
        numbers = check_numbers(claim.text, span.context)
        if numbers.unsupported:
            return verdict("unclear", "numbers not stated by the evidence: "
                           + ", ".join(q.text for q in numbers.unsupported))
        return verdict("pass", f"stated by {span.chunk.chunk_id}", span)


def conflicts(claim: str, span: Span) -> str | None:
    """A stated contradiction in the best sentence; only checked where the sentence is about the claim."""
    shared = len(claim_terms(claim)) - len(span.missing)
    if shared < max(1, (len(claim_terms(claim)) + 1) // 2):
        return None  # too little in common for its numbers or words to contradict the claim
    numbers = check_numbers(claim, span.context)
    if numbers.conflicting:
        return "numbers disagree with the evidence: " + ", ".join(q.text for q in numbers.conflicting)
    if not span.missing and negated(claim) != negated_where(span.sentence, claim):
        return "negation differs: the evidence asserts the opposite"
    direction = direction_conflict(claim, span.sentence) or restrictor_conflict(claim, span.sentence)
    if direction:
        return direction
    return swapped_roles(claim, span.sentence)
