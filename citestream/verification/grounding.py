"""A GroundingPack for a query: the one place the verify stage asks the index for evidence.

Swap ``grounding_for_query`` for the retrieval package's own builder when it
lands; the verify stage only needs ``(query, scope, k) -> GroundingPack``.
"""

from __future__ import annotations

from sqlalchemy.exc import ProgrammingError

from ..embedding import Embedder
from ..models.agent import AgentError
from ..models.retrieval import Citation, GroundingChunk, GroundingPack, RetrievalTrace
from ..store import ChunkHit, ChunkSearch


def pack_from_hits(hits: list[ChunkHit], k: int) -> GroundingPack:
    """Highest score first, one citation per chunk (rag-loop-acceptance §1.2)."""
    ordered = sorted(hits, key=lambda h: (-h.score, h.chunk_id))[:k]
    return GroundingPack(
        chunks=[GroundingChunk(chunk_id=h.chunk_id, doc_id=h.doc_id, text=h.text, score=round(h.score, 6),
                               metadata={"pdf": h.pdf, "page": h.page, "section": h.section,
                                         "authority": h.authority}) for h in ordered],
        citations=[Citation(chunk_id=h.chunk_id, pdf=h.pdf, page=h.page) for h in ordered],
        retrieval_trace=RetrievalTrace(stages=["semantic"], semantic_k=k, expansions=[]),
    )


def grounding_for_query(query: str, scope: str, k: int, search: ChunkSearch,
                        embedder: Embedder) -> tuple[GroundingPack | None, AgentError | None]:
    """The pack for ``query``, or TASK_FAILED when the collection does not exist."""
    try:
        return pack_from_hits(search.dense_search(embedder.embed_one(query), scope, k), k), None
    except ProgrammingError as exc:  # no chunks table: a structured error (outages are retried upstream)
        return None, AgentError(code="TASK_FAILED", message=f"{type(exc).__name__}: {exc}"[:500])
