"""A question's premises checked the way a claim is checked (``core.assumptions`` reads them from the question)."""

from __future__ import annotations

from ..models import NoAnswer
from ..models.verdicts import Claim
from .judge import ClaimJudge
from .verify_claims import PackForQuery, fail_closed

PACK_SIZE = 8


def unsupported_premise(premises: list[str], scope: str, judge: ClaimJudge,
                        pack_for_query: PackForQuery) -> NoAnswer | None:
    """The first premise the documents contradict or do not state, as the question's refusal (``FALSE_PREMISE``,
    naming the premise and, when contradicted, the sentence that says otherwise); None when every one passes. The
    judge is fail-closed: a premise it cannot find stated is not taken for granted."""
    for i, premise in enumerate(premises, start=1):
        pack, _ = pack_for_query(premise, scope, PACK_SIZE)
        if pack is None or not pack.chunks:
            return NoAnswer(code="FALSE_PREMISE", detail=f'the question assumes "{premise}"; no document states it')
        verdict = fail_closed(judge.judge(Claim(id=f"premise-{i}", text=premise), pack), pack)
        if verdict.verdict == "pass":
            continue
        if verdict.verdict == "fail" and verdict.evidence:
            said = verdict.evidence[0]
            detail = (f'the question assumes "{premise}", which the documents contradict ({said.chunkId}): '
                      f'"{said.quote}"')
        else:
            detail = f'the question assumes "{premise}", which the documents do not state ({verdict.rationale})'
        return NoAnswer(code="FALSE_PREMISE", detail=detail[:1000])
    return None
