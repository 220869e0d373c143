"""Reciprocal Rank Fusion of candidate lists and Maximal Marginal Relevance selection: pure functions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...store.search import Ranked


def rrf(lists: Sequence[tuple[Sequence[Ranked], float]], k: int = 60) -> list[tuple[str, float]]:
    """Fuse ranked lists: each chunk gets Σ weight / (k + rank), rank counted from 1; best first, ties by id."""
    fused: dict[str, float] = {}
    for ranked, weight in lists:
        for rank, item in enumerate(ranked, start=1):
            fused[item.chunk_id] = fused.get(item.chunk_id, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))


def mmr(relevance: Sequence[float], embeddings: np.ndarray, k: int, lam: float, duplicate: float = 1.0) -> list[int]:
    """Indexes of up to ``k`` items chosen greedily by λ·relevance − (1−λ)·max cosine to those already chosen; an item
    whose cosine to a chosen one exceeds ``duplicate`` is a copy, never chosen.

    ``relevance`` is each item's cosine similarity to the query (the classic MMR of Carbonell & Goldstein,
    on the same scale as the diversity term). The first pick is the most relevant item; ties go to the
    earlier (better fused) item, so the result is deterministic.
    """
    n = len(relevance)
    if n == 0 or k <= 0:
        return []
    rel = np.asarray(relevance, dtype=np.float64)
    vectors = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    similarity = vectors @ vectors.T
    chosen: list[int] = []
    max_sim = np.full(n, -np.inf)
    remaining = list(range(n))
    while remaining and len(chosen) < k:
        remaining = [i for i in remaining if max_sim[i] <= duplicate]
        if not remaining:
            break
        if not chosen:
            best = max(remaining, key=lambda i: (rel[i], -i))
        else:
            best = max(remaining, key=lambda i: (lam * rel[i] - (1 - lam) * max_sim[i], -i))
        chosen.append(best)
        remaining.remove(best)
        max_sim = np.maximum(max_sim, similarity[best])
    return chosen
