"""Phase A: retrieve facts for a question (qa-contract-v1 §1), gated by the relevance model. Facts only; never
an answer.

1. Whose rules: the regulators the question names narrow the scope to their documents (``scope``); a question
   about regulators with no indexed documents is refused here (WRONG_AUTHORITY).
2. Hybrid candidates, fused (``candidates``).
3. The relevance model scores the best fused candidates; its score is MMR's relevance and the facts' order.
4. The hard backstop: when no candidate reaches ``RelevancePolicy.backstop`` nothing relevant was found
   (NOT_RELEVANT), and no fact goes on.
5. The scores of the facts' sentences go on the record (``SentenceScores``) for generate and validate.
"""

from __future__ import annotations

from contextlib import nullcontext

from ...embedding import Embedder
from ...models import Fact, FactsRecord, QuestionEvent, QuestionReading, RelevanceTrace, RetrievalTrace
from ...core.policy import Policy, RelevancePolicy, RetrievalPolicy
from ...core.text_units import scored_units
from ...refusals import not_relevant, withheld, wrong_authority
from ...relevance import RelevanceModel, carrying
from .scope import asked_scope
from ...store import ChunkSearch
from ...store.search import Scope
from .candidates import gather
from .expansion import expand_query
from .lexicon import corpus_lexicon
from .reading import read_question
from .acceptance import Accepted, accept_chunks, rerank_pool


def search_chunks(query: str, scope: Scope, k: int, index: ChunkSearch, embedder: Embedder,
                  retrieval_policy: RetrievalPolicy,
                  relevance: RelevanceModel | None = None, relevance_policy: RelevancePolicy | None = None,
                  index_version: str | None = None, scored_as: str | None = None) -> tuple[Accepted, RetrievalTrace]:
    """The one retrieval path shared by the retrieve agent and the GroundingPack builder (``index_version``: the
    one the caller read, so the corpus lexicon need not read it again). The relevance model scores the candidates
    against ``scored_as`` (the question as read, ``reading``), else ``query``."""
    lexicon = corpus_lexicon(index, index_version) if retrieval_policy.corpus_variant else None
    variants = expand_query(query, lexicon=lexicon)
    pool_size = (relevance_policy or RelevancePolicy()).rerank_pool
    candidates = gather(variants, embedder.embed_together(variants), scope, index, retrieval_policy, k,
                        keep=max(retrieval_policy.mmr_pool, k, pool_size if relevance is not None else 0))
    scores = None
    stages = list(candidates.trace.stages)
    if relevance is not None:
        pool = rerank_pool(candidates, retrieval_policy, pool_size)
        scored = relevance.score_passages(scored_as or query, [h.text for h in pool])
        scores = {h.chunk_id: float(s) for h, s in zip(pool, scored)}
        stages.append("rerank")
    selection = accept_chunks(candidates, query, k, retrieval_policy, scores)
    stages += ["mmr"] if retrieval_policy.use_mmr else []
    update = {"stages": stages, "rerank_k": len(scores) if scores is not None else None}
    return selection, candidates.trace.model_copy(update=update)


def held_back(record: FactsRecord, backstop: float) -> FactsRecord:
    """``record``, retrieved under a lower backstop, as it would leave retrieve under ``backstop``: the threshold
    sweep retrieves once and tries each backstop on the same facts."""
    best = record.relevance.best if record.relevance else None
    refusal = not_relevant(best, backstop) if record.no_answer is None else None
    return record if refusal is None else withheld(record, refusal)


def find_facts(question: QuestionEvent, index: ChunkSearch, index_version: str, embedder: Embedder,
             policy: Policy, relevance: RelevanceModel | None = None,
             reading: QuestionReading | None = None) -> FactsRecord:
    """Phase A for one question; ``reading`` is how it was read (``reading.QuestionReader``), made here if not
    given."""
    k = min(question.top_k, policy.retrieval.top_k)
    relevance_policy = policy.relevance
    if reading is None:
        reading = read_question(question.question, corpus_lexicon(index, index_version)
                                if policy.retrieval.corpus_variant else None)
    asked = asked_scope(question.question, question.scope, index.authorities(index_version),
                        index.issuers(index_version))
    common = dict(**question.carry(policy_version=policy.version, index_version=index_version),
                  question=question.question, scope=question.scope, top_k=k, reading=reading)
    judge = relevance.name_for(reading.asked) if relevance is not None else ""  # the judge this question goes to

    def gate(scored: int = 0, best: float | None = None) -> RelevanceTrace | None:
        if relevance is None:
            return None
        return RelevanceTrace(model=judge, scored=scored, best=best,
                              backstop=relevance_policy.backstop,
                              named_authorities=list(asked.named),
                              authorities=list(asked.authorities) if asked.authorities is not None else None,
                              issuers=list(asked.issuers), scope_inferred=asked.inferred)

    if asked.refusal:
        return FactsRecord(**common, facts=[], retrieval_trace=RetrievalTrace(stages=["scope"]), relevance=gate(),
                           no_answer=wrong_authority(asked.refusal))
    scope = asked.searched(question.scope)
    with carrying(judge, reading.asked) if relevance is not None else nullcontext() as carried:
        selection, trace = search_chunks(question.question, scope, k, index, embedder, policy.retrieval, relevance,
                                         relevance_policy, index_version, reading.asked)
    best = max(selection.relevance.values(), default=None)
    no_answer = not_relevant(best, relevance_policy.backstop) if relevance is not None else None
    hits = [] if no_answer is not None else selection.hits
    facts = [
        Fact(quote=h.text, pdf=h.pdf, page=h.page, chunk_id=h.chunk_id, score=round(h.score, 6),
             relevance=round(selection.relevance[h.chunk_id], 6) if h.chunk_id in selection.relevance else None,
             doc_id=h.doc_id, section=h.section, authority=h.authority, parent_id=h.parent_id)
        for h in hits
    ]
    scores = carried.record(r for f in facts for r in scored_units(f.quote)) if carried and facts else None
    return FactsRecord(**common, facts=facts, fallback_used=selection.fallback_used, retrieval_trace=trace,
                       relevance=gate(len(selection.relevance), None if best is None else round(best, 6)),
                       no_answer=no_answer, sentence_scores=scores)
