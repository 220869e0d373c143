"""Phase A: retrieve facts for a question (qa-contract-v1 §1). Facts only; never an answer."""

from __future__ import annotations

from ..embedding import Embedder
from ..models import Fact, FactsRecord, QuestionEvent, RetrievalTrace
from ..policy import Policy, RetrievalPolicy
from ..store import ChunkSearch
from .lexicon import corpus_lexicon
from .candidates import gather
from .expansion import expand_query
from .selection import Selection, select


def search_chunks(query: str, scope: str, k: int, index: ChunkSearch, embedder: Embedder,
                  rp: RetrievalPolicy) -> tuple[Selection, RetrievalTrace]:
    """The one retrieval path shared by the retrieve agent and the GroundingPack builder."""
    variants = expand_query(query, lexicon=corpus_lexicon(index) if rp.corpus_variant else None)
    candidates = gather(variants, embedder.embed(variants), scope, index, rp, k)
    selection = select(candidates, query, k, rp)
    stages = [*candidates.trace.stages, *(["mmr"] if rp.use_mmr else [])]
    return selection, candidates.trace.model_copy(update={"stages": stages})


def retrieve(question: QuestionEvent, index: ChunkSearch, index_version: str, embedder: Embedder,
             policy: Policy) -> FactsRecord:
    k = min(question.top_k, policy.retrieval.top_k)
    selection, trace = search_chunks(question.question, question.scope, k, index, embedder, policy.retrieval)
    facts = [
        Fact(quote=h.text, pdf=h.pdf, page=h.page, chunk_id=h.chunk_id, score=round(h.score, 6), doc_id=h.doc_id,
             section=h.section, authority=h.authority, parent_id=h.parent_id)
        for h in selection.hits
    ]
    return FactsRecord(
        **question.carry(policy_version=policy.version, index_version=index_version),
        question=question.question,
        scope=question.scope,
        top_k=k,
        facts=facts,
        fallback_used=selection.fallback_used,
        retrieval_trace=trace,
    )
