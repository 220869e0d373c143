"""Phase A: retrieve facts for a question (qa-contract-v1 §1). Facts only; never an answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .embedding import Embedder
from .models import Fact, FactsRecord, QuestionEvent, RetrievalTrace
from .policy import Policy
from .store import ChunkHit, ChunkSearch
from .text import content_terms


@dataclass(frozen=True)
class ExpansionRule:
    """When ``trigger`` is in the query, search again with the missing ``adds`` appended."""

    trigger: str
    adds: tuple[str, ...]


# One line per rule; each rule needs a targeted perturbation test (qa-contract-v1 §4.2).
EXPANSION_RULES: tuple[ExpansionRule, ...] = (
    ExpansionRule("continuous processing", ("continuous manufacturing", "ICH Q13")),
)


def expand_query(query: str, rules: tuple[ExpansionRule, ...] = EXPANSION_RULES) -> list[str]:
    """The original query always, then one variant per matching rule with the terms it lacks."""
    variants = [query]
    lowered = query.lower()
    for rule in rules:
        if rule.trigger in lowered:
            missing = [term for term in rule.adds if term.lower() not in lowered]
            if missing:
                variants.append(" ".join([query, *missing]))
    return variants


def merge_best(hit_lists: list[list[ChunkHit]]) -> list[ChunkHit]:
    """Merge by (file, page, chunk_id), keeping each chunk's best score; best first, chunk_id breaks ties."""
    best: dict[tuple[str, int, str], ChunkHit] = {}
    for hits in hit_lists:
        for hit in hits:
            key = (hit.pdf, hit.page, hit.chunk_id)
            if key not in best or hit.score > best[key].score:
                best[key] = hit
    return sorted(best.values(), key=lambda h: (-h.score, h.chunk_id))


def pdf_name_matches(pdf: str, query: str) -> bool:
    """Fallback gate 2: the top-1 PDF's name shares a keyword (or document hint) with the query."""
    name_terms = content_terms(re.sub(r"[_\-.]+", " ", re.sub(r"\.pdf$", "", pdf, flags=re.I)))
    return bool(name_terms & content_terms(query))


def retrieve(question: QuestionEvent, index: ChunkSearch, index_version: str, embedder: Embedder,
             policy: Policy) -> FactsRecord:
    rp = policy.retrieval
    k = min(question.top_k, rp.top_k)
    variants = expand_query(question.question)
    vectors = embedder.embed(variants)
    hits = merge_best([index.dense_search(v, question.scope, k, rp.hnsw_ef_search) for v in vectors])

    accepted = [h for h in hits if h.score >= rp.min_similarity][:k]
    fallback_used = False
    if not accepted and rp.fallback_only_if_empty and hits:
        top = hits[0]
        if top.score >= rp.fallback_min_similarity and pdf_name_matches(top.pdf, question.question):
            accepted = [h for h in hits if h.score >= rp.fallback_min_similarity][:k]
            fallback_used = True

    facts = [
        Fact(quote=h.text, pdf=h.pdf, page=h.page, chunk_id=h.chunk_id, score=round(h.score, 6), doc_id=h.doc_id,
             section=h.section, authority=h.authority)
        for h in accepted
    ]
    return FactsRecord(
        **question.carry(policy_version=policy.version, index_version=index_version),
        question=question.question,
        scope=question.scope,
        top_k=k,
        facts=facts,
        fallback_used=fallback_used,
        retrieval_trace=RetrievalTrace(stages=["semantic"], semantic_k=k, expansions=variants),
    )


def format_facts(facts: list[Fact]) -> str:
    """The Phase A debug text contract."""
    lines = ["FACTS:"]
    for f in facts:
        lines.append(f'- "{f.quote}" (pdf="{f.pdf}", page={f.page}, chunk_id="{f.chunk_id}", score={f.score})')
    return "\n".join(lines)
