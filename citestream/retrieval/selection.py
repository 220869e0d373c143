"""From fused candidates to the accepted chunks: floor, MMR, fallback with its gate; highest cosine first."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..policy import RetrievalPolicy
from ..store.search import ChunkHit
from .candidates import Candidates
from .fusion import mmr
from .gate import fallback_accepts


@dataclass(frozen=True)
class Selection:
    hits: list[ChunkHit]      # highest cosine first, ties by chunk_id
    fallback_used: bool
    mmr_applied: bool


def select(candidates: Candidates, query: str, k: int, rp: RetrievalPolicy) -> Selection:
    """Chunks at ``min_similarity`` or better; only if none pass, the fallback floor behind its acceptance gate."""
    chosen = _diverse(candidates, rp.min_similarity, k, rp)
    fallback_used = False
    if not chosen and rp.fallback_only_if_empty and fallback_accepts(candidates.hits, rp.fallback_min_similarity,
                                                                     query):
        chosen = _diverse(candidates, rp.fallback_min_similarity, k, rp)
        fallback_used = bool(chosen)
    ordered = sorted(chosen, key=lambda h: (-h.score, h.chunk_id))
    return Selection(ordered, fallback_used, rp.use_mmr)


def _diverse(candidates: Candidates, floor: float, k: int, rp: RetrievalPolicy) -> list[ChunkHit]:
    """MMR over the best fused candidates that reach ``floor``: fusion picks the pool, cosine is the relevance."""
    eligible = [(h, s) for h, s in zip(candidates.hits, candidates.fused) if h.score >= floor]
    pool = eligible[: max(rp.mmr_pool, k)]
    if not rp.use_mmr or len(pool) <= 1:
        return [h for h, _ in pool[:k]]
    picks = mmr([h.score for h, _ in pool], np.stack([h.embedding for h, _ in pool]), k, rp.mmr_lambda)
    return [pool[i][0] for i in picks]
