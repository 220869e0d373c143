"""The default claim judge: the relevance model finds the sentence that states the claim; the claim passes only
if that sentence also agrees with it on every number, unit and polarity. Fail closed.

* Every sentence unit of the pack is scored with the claim (the model was trained on claims restated from the
  corpus, and on the same claims with a number changed or the polarity flipped, as not supported).
* The best unit must reach ``support_threshold``; below it nothing in the pack states the claim: ``unclear``.
* On that unit, the deterministic checks of the rules judge: a number of the same unit that disagrees, a
  negation on one side only, an opposite direction ("increase" / "decrease") or swapped roles is ``fail``; a
  number the unit does not state is ``unclear``. Only then ``pass``, with the unit quoted as evidence.
"""

from __future__ import annotations

from ..models.retrieval import GroundingPack
from ..models.verify import Claim, ClaimVerdict, EvidenceRef
from ..text import sentence_units, words
from .checks import direction_conflict, negated, negated_where, swapped_roles
from .numbers import check_numbers

SUPPORT_THRESHOLD = 0.5


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
        units = [(unit, chunk) for chunk in pack.chunks for unit in sentence_units(chunk.text)
                 if len(words(unit)) >= 4]
        if not units:
            return self._verdict(claim, "unclear", "no grounding sentences: nothing can support the claim")
        scores = self.relevance.score(claim.text, [u for u, _ in units])
        best = max(range(len(units)), key=lambda i: (scores[i], -i))
        unit, chunk = units[best]
        evidence = [EvidenceRef(chunkId=chunk.chunk_id, quote=unit)]
        if scores[best] < self.support_threshold:
            return self._verdict(claim, "unclear", f"no sentence states the claim (best support {scores[best]:.2f} "
                                                   f"< {self.support_threshold})")
        why = conflict(claim.text, unit)
        if why:
            return self._verdict(claim, "fail", why, evidence)
        unstated = check_numbers(claim.text, unit).unsupported
        if unstated:
            return self._verdict(claim, "unclear", "numbers not stated by the evidence: "
                                 + ", ".join(q.text for q in unstated), evidence)
        return self._verdict(claim, "pass", f"stated by {chunk.chunk_id} (support {scores[best]:.2f})", evidence)

    @staticmethod
    def _verdict(claim: Claim, verdict: str, why: str, evidence: list[EvidenceRef] | None = None) -> ClaimVerdict:
        return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict=verdict, evidence=evidence or [],
                            rationale=why)
