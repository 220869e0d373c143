"""A question's premises checked the way a claim is checked (``core.assumptions`` reads them from the question)."""

from __future__ import annotations

from ..models import NoAnswer
from ..models.verdicts import Claim
from ..refusals import premise_refusal
from .judge import ClaimJudge
from .verify_claims import PackForQuery, fail_closed

PACK_SIZE = 8


def unsupported_premise(premises: list[str], scope: str, judge: ClaimJudge,
                        pack_for_query: PackForQuery) -> NoAnswer | None:
    """The first premise the documents contradict or do not state, as the question's refusal (``FALSE_PREMISE``,
    decided by ``refusals.premise_refusal``); None when every one passes. Each premise is judged as a claim against
    the passages found for it; the judge is fail-closed."""
    for i, premise in enumerate(premises, start=1):
        pack, _ = pack_for_query(premise, scope, PACK_SIZE)
        verdict = (None if pack is None or not pack.chunks
                   else fail_closed(judge.judge(Claim(id=f"premise-{i}", text=premise), pack), pack))
        refusal = premise_refusal(premise, verdict)
        if refusal is not None:
            return refusal
    return None
