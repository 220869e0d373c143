"""The CLAIM_VERIFY stage: claims plus a GroundingPack (given, or retrieved for a query) → one verdict each."""

from __future__ import annotations

from collections.abc import Callable

from ..models.agent import AgentError
from ..models.retrieval import GroundingPack
from ..models.verdicts import ClaimVerdict, ClaimVerifyRequest, ClaimVerifyResult, VerifyOutputs
from .judge import ClaimJudge

PackForQuery = Callable[[str, str, int], tuple[GroundingPack | None, AgentError | None]]
"""(query, scope, k) → the pack, or a structured error (empty query, missing collection)."""


def pack_finder(search, embedder, policy, relevance) -> PackForQuery:
    """The hybrid, reranked GroundingPack of the retrieve stage's own path (rag-loop-acceptance §1.2, §3)."""
    from ..qa.retrieve import grounding_pack

    def find(query: str, scope: str, k: int):
        result = grounding_pack(query, scope, k, search, embedder, policy, relevance)
        return result.grounding, result.error
    return find


def fail_closed(verdict: ClaimVerdict, pack: GroundingPack | None) -> ClaimVerdict:
    """Evidence must name chunks of the pack; a pass left without evidence becomes unclear."""
    known = {c.chunk_id for c in pack.chunks} if pack else set()
    evidence = [e for e in verdict.evidence if e.chunkId in known]
    dropped = len(verdict.evidence) - len(evidence)
    update: dict = {"evidence": evidence}
    if verdict.verdict == "pass" and not evidence:
        update["verdict"] = "unclear"
        update["rationale"] = "pass without evidence from the grounding pack is not allowed (fail closed)"
    elif dropped:
        update["rationale"] = f"{verdict.rationale} [{dropped} evidence ref(s) outside the pack dropped]".strip()
    return verdict.model_copy(update=update)


def verify_claims(request: ClaimVerifyRequest, judge: ClaimJudge, pack_for_query: PackForQuery,
                  policy_version: str, index_version: str | None = None) -> ClaimVerifyResult:
    error = None
    pack = request.grounding
    if pack is None and request.query is not None:
        if request.query.strip():
            pack, error = pack_for_query(request.query, request.scope, request.topK)
        else:
            error = AgentError(code="VALIDATION_ERROR", message="inputs.query is empty")
    verdicts = []
    for claim in request.claims:
        if pack is None or not pack.chunks:
            verdict = ClaimVerdict(claimId=claim.id, claim=claim.text, verdict="unclear",
                                   rationale="no grounding pack (or an empty one): fail closed")
        else:
            verdict = fail_closed(judge.judge(claim, pack), pack)
        verdicts.append(verdict)
    return ClaimVerifyResult(
        **request.carry(policy_version=request.policy_version or policy_version,
                        index_version=request.index_version or index_version),
        status="error" if error else "ok",
        outputs=VerifyOutputs(claim_verdicts=verdicts, overallPass=all(v.verdict == "pass" for v in verdicts)),
        grounding=pack,
        error=error,
    )
