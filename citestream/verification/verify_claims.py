"""The CLAIM_VERIFY stage: claims plus a GroundingPack (given, or retrieved for a query) → one verdict each."""

from __future__ import annotations

from collections.abc import Callable

from ..models.agent import AgentError
from ..models.common import request_digest
from ..models.retrieval import GroundingPack
from ..models.verdicts import (
    Claim, ClaimVerdict, ClaimVerifyRequest, ClaimVerifyResult, GroundingSource, VerifyOutputs,
)
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
    """One verdict per claim, sealed with where the pack came from and what was asked (review54b, N-M1, N-M2)."""
    pack, error = _grounding(request, pack_for_query)
    verdicts = [_verdict(claim, pack, judge) for claim in request.claims]
    grounding_source = _source(request, pack)
    return ClaimVerifyResult(
        **request.carry(policy_version=request.policy_version or policy_version,
                        index_version=index_version if grounding_source == "retrieved" else None),
        status="error" if error else "ok",
        outputs=VerifyOutputs(claim_verdicts=verdicts, overallPass=all(v.verdict == "pass" for v in verdicts)),
        grounding=pack,
        grounding_source=grounding_source,
        request_digest=request_digest(request),
        error=error,
    )


def _grounding(request: ClaimVerifyRequest,
               pack_for_query: PackForQuery) -> tuple[GroundingPack | None, AgentError | None]:
    """The pack given, or the one retrieved for the query (an empty query is a validation error)."""
    if request.grounding is not None or request.query is None:
        return request.grounding, None
    if not request.query.strip():
        return None, AgentError(code="VALIDATION_ERROR", message="inputs.query is empty")
    return pack_for_query(request.query, request.scope, request.topK)


def _source(request: ClaimVerifyRequest, pack: GroundingPack | None) -> GroundingSource | None:
    """A publisher's pack is named as such, and never sealed with an index version: nothing checked it against one."""
    if request.grounding is not None:
        return "request"
    return "retrieved" if pack is not None else None


def _verdict(claim: Claim, pack: GroundingPack | None, judge: ClaimJudge) -> ClaimVerdict:
    if pack is None or not pack.chunks:
        return ClaimVerdict(claimId=claim.id, claim=claim.text, verdict="unclear",
                            rationale="no grounding pack (or an empty one): fail closed")
    return fail_closed(judge.judge(claim, pack), pack)
