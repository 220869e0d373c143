"""`claims.verify` → `claims.verdicts` (rag-loop-acceptance §1.3, CLAIM_VERIFY)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .agent import AgentError, AgentStatus
from .common import Contract, Envelope, InputTrace, Name, Scope, Sealed
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


class ClaimVerifyResult(Envelope, Sealed):
    policy_version: Name | None = None
    status: AgentStatus
    outputs: VerifyOutputs
    grounding: GroundingPack | None = None
    error: AgentError | None = None
