"""claims.verify → verify (retrieve a GroundingPack if only a query came; a verdict per claim) → claims.verdicts"""

from ..models import ClaimVerifyRequest, ClaimVerifyResult
from ..retrieval import grounding_pack
from ..verification import judge_from_settings, verify_claims
from .app import stage_agent
from .deps import Deps


def pack_for_query(deps: Deps):
    """The hybrid, reranked GroundingPack the retrieve stage's own path builds (rag-loop-acceptance §1.2, §3)."""
    def find(query: str, scope: str, k: int):
        result = grounding_pack(query, scope, k, deps.search, deps.embedder, deps.policy, deps.relevance)
        return result.grounding, result.error
    return find


@stage_agent("verify", source="claims.verify", sink="claims.verdicts")
def verify(request: ClaimVerifyRequest, deps: Deps) -> ClaimVerifyResult:
    judge = judge_from_settings(deps.settings, lambda: deps.llm, lambda: deps.relevance)
    return verify_claims(request, judge, pack_for_query(deps), deps.policy.version, deps.chunks.index_version())
