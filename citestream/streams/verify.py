"""claims.verify → verify (retrieve a GroundingPack if only a query came; a verdict per claim) → claims.verdicts"""

from ..models import ClaimVerifyRequest, ClaimVerifyResult
from ..verification import judge_from_settings, pack_finder, verify_claims
from .app import stage_agent
from .deps import Deps


@stage_agent("verify", source="claims.verify", sink="claims.verdicts")
def verify(request: ClaimVerifyRequest, deps: Deps) -> ClaimVerifyResult:
    judge = judge_from_settings(deps.settings, lambda: deps.llm, lambda: deps.relevance)
    return verify_claims(request, judge, pack_finder(deps.search, deps.embedder, deps.policy, deps.relevance),
                         deps.policy.version, deps.chunks.index_version())
