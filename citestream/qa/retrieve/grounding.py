"""The GroundingPack of rag-loop-acceptance §1.2 / §3, with its structured failure modes (§4.1, §4.2, §4.5).

``grounding_pack`` is what the verify agent (and any other caller) uses to get
evidence for a query: the same Phase A path as the retrieve agent, with topK
clamped to [1, 100] instead of the facts' top_k 8.
"""

from __future__ import annotations

from ...embedding import Embedder
from ...models.agent import AgentError
from ...models.retrieval import Citation, GroundingChunk, GroundingPack, GroundingResult
from ...core.policy import Policy
from ...store import ChunkSearch
from ...store.search import SCOPE_AUTHORITIES
from .facts import search_chunks

MIN_TOP_K, MAX_TOP_K = 1, 100


def clamp_top_k(top_k: int) -> int:
    return min(MAX_TOP_K, max(MIN_TOP_K, int(top_k)))


def grounding_pack(query: str, scope: str, top_k: int, search: ChunkSearch, embedder: Embedder,
                   policy: Policy, relevance=None) -> GroundingResult:
    """Chunks highest score first with one citation each, or a structured error; never raises on bad input.

    With the relevance model the candidates are reranked (rag-loop-acceptance §3.3) and ``score`` is the
    model's relevance, so "highest score first" (§3.4) still holds; the cosine stays in ``metadata``.

    empty query → VALIDATION_ERROR; unknown scope → VALIDATION_ERROR; missing collection → TASK_FAILED;
    a query or scope that matches nothing → status ok with empty chunks.
    """
    k = clamp_top_k(top_k)
    if not query or not query.strip():
        return _error("VALIDATION_ERROR", "query is empty", k)
    if scope not in SCOPE_AUTHORITIES:
        return _error("VALIDATION_ERROR", f"scope {scope!r} is not one of {sorted(SCOPE_AUTHORITIES)}", k)
    if not search.exists():
        return _error("TASK_FAILED", "the chunks collection does not exist (database missing or not migrated)", k)
    try:
        selection, trace = search_chunks(query, scope, k, search, embedder, policy.retrieval, relevance,
                                         policy.relevance)
        names = search.document_names([h.doc_id for h in selection.hits])  # the verifier reads them (issue 52)
    except Exception as exc:  # noqa: BLE001  (database gone mid-query: a structured error, not a crash)
        return _error("TASK_FAILED", f"{type(exc).__name__}: {exc}"[:500], k)
    chunks = [
        GroundingChunk(chunk_id=h.chunk_id, doc_id=h.doc_id, text=h.text,
                       score=round(selection.relevance.get(h.chunk_id, h.score), 6),
                       metadata={"pdf": h.pdf, "page": h.page, "section": h.section, "authority": h.authority,
                                 "parent_id": h.parent_id, "cosine": round(h.score, 6),
                                 "relevance": selection.relevance.get(h.chunk_id),
                                 **_name(names.get(h.doc_id))})
        for h in selection.hits
    ]
    citations = [Citation(chunk_id=h.chunk_id, pdf=h.pdf, page=h.page) for h in selection.hits]
    pack = GroundingPack(chunks=chunks, citations=citations, retrieval_trace=trace)
    return GroundingResult(status="ok", grounding=pack, total=len(chunks), top_k=k,
                           fallback_used=selection.fallback_used)


def _error(code: str, message: str, k: int) -> GroundingResult:
    return GroundingResult(status="error", grounding=None, error=AgentError(code=code, message=message), total=0,
                           top_k=k)


def _name(title_issuer: tuple[str, str] | None) -> dict[str, str]:
    """A hit's document title and issuer, as the verifier reads them (capped: a title is the document's own text)."""
    title, issuer = title_issuer or ("", "")
    return {"title": title[:1000], "issuer": issuer[:1000]}
