"""Phase B, local mode: keep the facts relevant to the question (qa-contract-v1 Phase B)."""

from __future__ import annotations

import re

from .models import Fact, FactsRecord, RelevantFactsRecord
from .models.filtering import DroppedFact
from .policy import Policy
from .text import content_terms, words

_LEADER_DOTS = re.compile(r"(\.\s?){5,}")


def is_artifact(quote: str) -> bool:
    """Headers, footers, line-number runs and table-of-contents lines carry no answerable fact."""
    tokens = words(quote)
    if len(tokens) < 5:
        return True
    numeric = sum(t.replace(".", "").isdigit() for t in tokens)
    if numeric / len(tokens) > 0.5:
        return True
    return len(_LEADER_DOTS.findall(quote)) >= 2


def similarity_key(quote: str) -> str:
    """Normalised first words: two quotes with the same key say the same thing."""
    return " ".join(words(quote)[:40])


def filter_facts(record: FactsRecord, policy: Policy) -> RelevantFactsRecord:
    question_terms = content_terms(record.question)
    kept: list[Fact] = []
    dropped: list[DroppedFact] = []
    seen: set[str] = set()
    for fact in record.facts:
        if is_artifact(fact.quote):
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="ARTIFACT"))
        elif not question_terms & content_terms(fact.quote):
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="NO_TERM_OVERLAP"))
        elif similarity_key(fact.quote) in seen:
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="DUPLICATE"))
        elif len(kept) >= policy.retrieval.max_context_chunks:
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="MAX_CONTEXT_CHUNKS"))
        else:
            seen.add(similarity_key(fact.quote))
            kept.append(fact)
    return RelevantFactsRecord(
        **record.carry(),
        question=record.question,
        scope=record.scope,
        top_k=record.top_k,
        facts=kept,
        dropped=dropped,
        filter_mode="local",
        fallback_used=record.fallback_used,
    )
