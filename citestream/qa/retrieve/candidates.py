"""Hybrid candidates: dense + child lexical + parent lexical lists per query variant, fused with RRF.

Every list comes from Postgres, so any number of workers see the same index.
Every fused candidate gets its cosine similarity to the best-matching query
variant (the score the floors and the fallback gate are defined on); only the
ones anything reads further (the first ``keep`` above each floor: the model's
pool and MMR's) are hydrated with their text and embedding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...models import RetrievalTrace
from ...core.policy import RetrievalPolicy
from ...store.search import ChunkHit, ChunkSearch, Cosine, Ranked, Scope
from .fusion import rrf

MODES = ("hybrid", "dense", "lexical")


@dataclass(frozen=True)
class Candidates:
    hits: list[ChunkHit]      # best fused first: the first ``keep`` above each floor, hydrated
    fused: list[float]        # the fused score of each hit
    trace: RetrievalTrace
    top: Cosine | None        # the best candidate by cosine among all fused ones (the fallback gate's top-1)


def gather(variants: Sequence[str], vectors: np.ndarray, scope: Scope, search: ChunkSearch, policy: RetrievalPolicy,
           k: int, keep: int | None = None) -> Candidates:
    """Fused candidates for the query variants under ``policy.mode`` (hybrid | dense | lexical); ``keep``: how many
    above each floor the caller reads (the relevance model's pool, MMR's pool), None: every one."""
    if policy.mode not in MODES:
        raise ValueError(f"unknown retrieval mode {policy.mode!r}; one of {MODES}")
    semantic_k, bm25_k = max(policy.semantic_k, k), max(policy.bm25_k, k)
    with search.reading(max(policy.hnsw_ef_search, semantic_k), variants[0] if variants else None) as reader:
        return _gather(variants, vectors, scope, reader, policy, semantic_k, bm25_k, keep)


def _gather(variants: Sequence[str], vectors: np.ndarray, scope: Scope, search: ChunkSearch, policy: RetrievalPolicy,
            semantic_k: int, bm25_k: int, keep: int | None) -> Candidates:
    lists: list[tuple[list[Ranked], float]] = []
    stages: list[str] = []
    if policy.mode in ("hybrid", "dense"):
        stages.append("semantic")
        for vector in vectors:
            lists.append((search.dense(vector, scope, semantic_k, policy.hnsw_ef_search), policy.semantic_weight))
    if policy.mode in ("hybrid", "lexical"):
        stages.append("bm25")
        for query, vector in zip(variants, vectors):
            lists.append((search.lexical(query, scope, bm25_k, policy.lexical_ranker, policy.bm25_k1, policy.bm25_b),
                          policy.child_lexical_weight))
            lists.append((search.lexical_parents(query, vector, scope, bm25_k, policy.lexical_ranker, policy.bm25_k1,
                                                 policy.bm25_b), policy.parent_lexical_weight))
    stages.append("rrf")
    fused = rrf(lists, policy.rrf_k)
    scored, hits = search.choose([cid for cid, _ in fused], list(vectors),
                                 (policy.min_similarity, policy.fallback_min_similarity), keep)
    fused_score = dict(fused)
    top = min(scored, key=lambda c: (-c.score, c.chunk_id), default=None)
    trace = RetrievalTrace(
        stages=stages,
        semantic_k=semantic_k if "semantic" in stages else None,
        bm25_k=bm25_k if "bm25" in stages else None,
        rerank_k=None,
        expansions=list(variants),
        lexical_ranker=policy.lexical_ranker if "bm25" in stages else None,
        fused_candidates=len(scored),
    )
    return Candidates(hits, [fused_score[h.chunk_id] for h in hits], trace, top)

