"""The default claim judge: the relevance model finds the sentence that states the claim; the claim passes only
if that sentence also agrees with it on every number, unit and polarity. Fail closed.

* Every sentence unit of the pack is scored with the claim (the model was trained on claims restated from the
  corpus, and on the same claims with a number changed or the polarity flipped, as not supported).
* The best unit must reach ``support_threshold``; below it nothing in the pack states the claim: ``unclear``.
* On the best unit, the deterministic checks of the rules judge: a number of the same unit that disagrees, a
  negation on one side only, an opposite direction ("increase" / "decrease") or swapped roles is ``fail``.
* A claim passes on the first of the ``CANDIDATES`` best units above the threshold that states all of it: every
  claim term (names exactly, other words by stem) and every number, in the unit or the sentence before when the
  unit opens with an anaphor. The model finds the sentence but does not see that "pilot scale" is not
  "commercial scale": measured, letting it judge paraphrase passed false claims, so fail-closed wins.
  Otherwise ``unclear``. Only ``pass`` carries the unit quoted as evidence.
"""

from __future__ import annotations

from ..models.retrieval import GroundingPack
from ..models.verify import Claim, ClaimVerdict, EvidenceRef
from ..text import sentence_units, words
from .checks import direction_conflict, negated, negated_where, swapped_roles
from .numbers import check_numbers
from .offline import in_context
from .terms import claim_terms, missing_terms

SUPPORT_THRESHOLD = 0.5
CANDIDATES = 3


def conflict(claim: str, sentence: str) -> str | None:
    numbers = check_numbers(claim, sentence)
    if numbers.conflicting:
        return "numbers disagree with the evidence: " + ", ".join(q.text for q in numbers.conflicting)
    if negated(claim) != negated_where(sentence, claim):
        return "negation differs: the evidence asserts the opposite"
    return direction_conflict(claim, sentence) or swapped_roles(claim, sentence)


class RelevanceJudge:
    name = "relevance-v1"

    def __init__(self, relevance, support_threshold: float = SUPPORT_THRESHOLD):
        self.relevance = relevance
        self.support_threshold = support_threshold

    def judge(self, claim: Claim, pack: GroundingPack) -> ClaimVerdict:
        units = [(unit, chunk, context) for chunk in pack.chunks
                 for unit, context in in_context(sentence_units(chunk.text)) if len(words(unit)) >= 4]
        if not units:
            return self._verdict(claim, "unclear", "no grounding sentences: nothing can support the claim")
        scores = self.relevance.score(claim.text, [u for u, _, _ in units])
        order = sorted(range(len(units)), key=lambda i: (-scores[i], i))
        best = order[0]
        if scores[best] < self.support_threshold:
            return self._verdict(claim, "unclear", f"no sentence states the claim (best support {scores[best]:.2f} "
                                                   f"< {self.support_threshold})")
        unit, chunk, _ = units[best]
        why = conflict(claim.text, unit)
        if why:
            return self._verdict(claim, "fail", why, [EvidenceRef(chunkId=chunk.chunk_id, quote=unit)])
        terms = claim_terms(claim.text)
        first_gap: list[str] = []  # the best sentence passed the threshold, so the loop sets it
        for i in order[:CANDIDATES]:
            if scores[i] < self.support_threshold:
                break
            _, chunk, context = units[i]
            missing = [t.raw for t in missing_terms(terms, context)]
            missing += [q.text for q in check_numbers(claim.text, context).unsupported]
            if not missing:
                return self._verdict(claim, "pass", f"stated by {chunk.chunk_id} (support {scores[i]:.2f})",
                                     [EvidenceRef(chunkId=chunk.chunk_id, quote=context)])
            first_gap = first_gap or missing
        return self._verdict(claim, "unclear", "the closest sentences do not state: " + ", ".join(first_gap))

    @staticmethod
    def _verdict(claim: Claim, verdict: str, why: str, evidence: list[EvidenceRef] | None = None) -> ClaimVerdict:
        return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict=verdict, evidence=evidence or [],
                            rationale=why)

