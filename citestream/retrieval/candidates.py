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

from ..models import RetrievalTrace
from ..policy import RetrievalPolicy
from ..store.search import ChunkHit, ChunkSearch, Cosine, Ranked, Scope
from .fusion import rrf

MODES = ("hybrid", "dense", "lexical")


@dataclass(frozen=True)
class Candidates:
    hits: list[ChunkHit]      # best fused first: the first ``keep`` above each floor, hydrated
    fused: list[float]        # the fused score of each hit
    trace: RetrievalTrace
    top: Cosine | None        # the best candidate by cosine among all fused ones (the fallback gate's top-1)


def gather(variants: Sequence[str], vectors: np.ndarray, scope: Scope, search: ChunkSearch, rp: RetrievalPolicy,
           k: int, keep: int | None = None) -> Candidates:
    """Fused candidates for the query variants under ``rp.mode`` (hybrid | dense | lexical); ``keep``: how many
    above each floor the caller reads (the relevance model's pool, MMR's pool), None: every one."""
    if rp.mode not in MODES:
        raise ValueError(f"unknown retrieval mode {rp.mode!r}; one of {MODES}")
    semantic_k, bm25_k = max(rp.semantic_k, k), max(rp.bm25_k, k)
    with search.reading(max(rp.hnsw_ef_search, semantic_k)) as reader:
        return _gather(variants, vectors, scope, reader, rp, semantic_k, bm25_k, keep)


def _gather(variants: Sequence[str], vectors: np.ndarray, scope: Scope, search: ChunkSearch, rp: RetrievalPolicy,
            semantic_k: int, bm25_k: int, keep: int | None) -> Candidates:
    lists: list[tuple[list[Ranked], float]] = []
    stages: list[str] = []
    if rp.mode in ("hybrid", "dense"):
        stages.append("semantic")
        for vector in vectors:
            lists.append((search.dense(vector, scope, semantic_k, rp.hnsw_ef_search), rp.semantic_weight))
    if rp.mode in ("hybrid", "lexical"):
        stages.append("bm25")
        for query, vector in zip(variants, vectors):
            lists.append((search.lexical(query, scope, bm25_k, rp.lexical_ranker, rp.bm25_k1, rp.bm25_b),
                          rp.child_lexical_weight))
            lists.append((search.lexical_parents(query, vector, scope, bm25_k, rp.lexical_ranker, rp.bm25_k1,
                                                 rp.bm25_b), rp.parent_lexical_weight))
    stages.append("rrf")
    fused = rrf(lists, rp.rrf_k)
    cosines = {c.chunk_id: c for c in search.cosines([cid for cid, _ in fused], list(vectors))}
    found = [cid for cid, _ in fused if cid in cosines]
    wanted = found if keep is None else _first_above(found, cosines, (rp.min_similarity, rp.fallback_min_similarity),
                                                      keep)
    by_id = {h.chunk_id: h for h in search.hydrate(wanted, list(vectors))}
    kept = [(by_id[cid], score) for cid, score in fused if cid in by_id]
    top = min(cosines.values(), key=lambda c: (-c.score, c.chunk_id), default=None)
    trace = RetrievalTrace(
        stages=stages,
        semantic_k=semantic_k if "semantic" in stages else None,
        bm25_k=bm25_k if "bm25" in stages else None,
        rerank_k=None,
        expansions=list(variants),
        lexical_ranker=rp.lexical_ranker if "bm25" in stages else None,
        fused_candidates=len(found),
    )
    return Candidates([h for h, _ in kept], [s for _, s in kept], trace, top)


def _first_above(ordered: list[str], cosines: dict[str, Cosine], floors: Sequence[float], keep: int) -> list[str]:
    """The first ``keep`` candidates (in fused order) at or above each floor: every prefix the pools take."""
    wanted: dict[str, None] = {}
    for floor in floors:
        wanted.update(dict.fromkeys([cid for cid in ordered if cosines[cid].score >= floor][:keep]))
    return list(wanted)
