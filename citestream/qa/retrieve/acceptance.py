"""From fused candidates to the accepted chunks: floor, MMR, fallback with its gate; highest cosine first."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.policy import RetrievalPolicy
from ...store.search import ChunkHit
from .candidates import Candidates
from .fusion import mmr
from .gate import fallback_accepts


@dataclass(frozen=True)
class Accepted:
    hits: list[ChunkHit]      # most relevant first (the model's order when it scored them, else cosine), ties by id
    fallback_used: bool
    mmr_applied: bool
    relevance: dict[str, float] = field(default_factory=dict)  # the model's score of every candidate it scored


def accept_chunks(candidates: Candidates, query: str, k: int, policy: RetrievalPolicy,
                  relevance: dict[str, float] | None = None) -> Accepted:
    """Chunks at ``min_similarity`` or better; only if none pass, the fallback floor behind its acceptance gate.

    With ``relevance`` (the model's score per candidate), MMR's relevance term is the model's score and the
    result is ordered by it (policy-qa-design-notes: the cross-encoder score joins the fusion); without, cosine.
    """
    chosen = _diverse(candidates, policy.min_similarity, k, policy, relevance)
    fallback_used = False
    if not chosen and policy.fallback_only_if_empty and fallback_accepts(candidates.top, policy.fallback_min_similarity,
                                                                     query):
        chosen = _diverse(candidates, policy.fallback_min_similarity, k, policy, relevance)
        fallback_used = bool(chosen)
    key = (lambda h: (-relevance.get(h.chunk_id, 0.0), -h.score, h.chunk_id)) if relevance else \
        (lambda h: (-h.score, h.chunk_id))
    return Accepted(sorted(chosen, key=key), fallback_used, policy.use_mmr, dict(relevance or {}))


def _embedding(hit: ChunkHit) -> np.ndarray:
    assert hit.embedding is not None  # candidates come from ChunkSearch.hydrate, each with its embedding
    return hit.embedding


def _diverse(candidates: Candidates, floor: float, k: int, policy: RetrievalPolicy,
             relevance: dict[str, float] | None) -> list[ChunkHit]:
    """MMR over the best fused candidates that reach ``floor``: fusion picks the pool; the model's score (or the
    cosine, without a model) is the relevance."""
    eligible = [(h, s) for h, s in zip(candidates.hits, candidates.fused) if h.score >= floor]
    pool = eligible[: max(policy.mmr_pool, k)]
    if relevance:
        pool = [(h, s) for h, s in pool if h.chunk_id in relevance]
    score = (lambda h: relevance[h.chunk_id]) if relevance else (lambda h: h.score)
    if not policy.use_mmr or len(pool) <= 1:
        return [h for h, _ in sorted(pool, key=lambda p: -score(p[0]))[:k]]
    rel = np.array([score(h) for h, _ in pool])
    if policy.mmr_scaled and rel.max() > rel.min():
        rel = (rel - rel.min()) / (rel.max() - rel.min())
    picks = mmr(list(rel), np.stack([_embedding(h) for h, _ in pool]), k, policy.mmr_lambda, policy.mmr_duplicate)
    return [pool[i][0] for i in picks]


def rerank_pool(candidates: Candidates, policy: RetrievalPolicy, size: int) -> list[ChunkHit]:
    """The candidates the relevance model scores: the best fused ones that could pass the fallback floor."""
    floor = min(policy.min_similarity, policy.fallback_min_similarity)
    return [h for h in candidates.hits if h.score >= floor][: max(size, 1)]
