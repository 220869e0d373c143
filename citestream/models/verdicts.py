"""`claims.verify` → `claims.verdicts` (rag-loop-acceptance §1.3, CLAIM_VERIFY)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .agent import AgentError, AgentStatus
from .common import BoundToRequest, Contract, Envelope, InputTrace, Name, Scope, Sealed
from .limits import MAX_CLAIM_CHARS, MAX_CLAIMS, MAX_NAME_CHARS, MAX_QUERY_CHARS, TopK
from .retrieval import GroundingPack


class Claim(Contract):
    id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    text: str = Field(max_length=MAX_CLAIM_CHARS)


class ClaimVerifyRequest(Envelope):
    """Key: ``request_id``. Either a GroundingPack or a query to retrieve one (or neither: all unclear)."""

    policy_version: Name | None = None
    trace: InputTrace = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list, max_length=MAX_CLAIMS)
    grounding: GroundingPack | None = None
    query: str | None = Field(None, max_length=MAX_QUERY_CHARS)
    scope: Scope = "MIXED"
    topK: TopK = Field(8, description="Any integer (or integer string), clamped to [1, 100] (rag-loop-acceptance §4.5)")

    def asked(self) -> dict[str, Any]:
        """What the verdicts depend on (``request_digest``): the claims and the pack given, or the query to find one."""
        return self.model_dump(mode="json", include={"claims", "grounding", "query", "scope", "topK"})


class EvidenceRef(Contract):
    chunkId: str
    quote: str = ""


class ClaimVerdict(Contract):
    claimId: str
    claim: str
    verdict: Literal["pass", "fail", "unclear"]
    evidence: list[EvidenceRef] = Field(default_factory=list)
    rationale: str = ""


class VerifyOutputs(Contract):
    claim_verdicts: list[ClaimVerdict] = Field(default_factory=list)
    overallPass: bool


GroundingSource = Literal["retrieved", "request"]


class ClaimVerifyResult(Envelope, Sealed, BoundToRequest):
    policy_version: Name | None = None
    status: AgentStatus
    outputs: VerifyOutputs
    grounding: GroundingPack | None = None
    grounding_source: GroundingSource | None = Field(None, description=(
        "Where `grounding` came from: `retrieved` from the worker's index (`index_version` is the worker's), or "
        "`request`: the publisher's own pack, checked against nothing (`index_version` is then empty). None: no pack"))
    error: AgentError | None = None
