"""`claims.verify` → `claims.verdicts` (rag-loop-acceptance §1.3, CLAIM_VERIFY)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .agent import AgentError, AgentStatus
from .common import Contract, Envelope, Scope
from .retrieval import GroundingPack


class Claim(Contract):
    id: str = Field(min_length=1)
    text: str


class ClaimVerifyRequest(Envelope):
    """Key: ``request_id``. Either a GroundingPack or a query to retrieve one (or neither: all unclear)."""

    policy_version: str | None = None
    claims: list[Claim] = Field(default_factory=list)
    grounding: GroundingPack | None = None
    query: str | None = None
    scope: Scope = "MIXED"
    topK: int = Field(8, ge=1, le=100, description="Clamped to [1, 100] (rag-loop-acceptance §4.5)")

    @field_validator("topK", mode="before")
    @classmethod
    def _clamp_top_k(cls, value):
        return min(100, max(1, value)) if isinstance(value, int) and not isinstance(value, bool) else value


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


class ClaimVerifyResult(Envelope):
    policy_version: str | None = None
    status: AgentStatus
    outputs: VerifyOutputs
    grounding: GroundingPack | None = None
    error: AgentError | None = None
