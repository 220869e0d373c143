"""Phase B fact filtering, two modes behind one interface (qa-contract-v1 Phase B).

``filter_facts(record, policy)`` runs the local filter (the default).
``filter_facts(record, policy, llm=backend)`` asks the model first; when its
reply breaks the Phase B contract, or the call fails, the local filter
decides instead and the record says so (``filter_fallback_reason``).
``run_filter`` also returns the rejected reply so the agent can dead-letter it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ...core.hashing import sha256_hex
from ...llm import LLMBackend
from ...models import Fact, FactsRecord, RelevantFactsRecord
from ...models.filtering import DroppedFact
from ...core.policy import Policy
from ...refusals import below_floor
from .llm_filter import InvalidReply, build_filter_prompt, reply_payload, validate_relevant_facts
from .rule_filter import artifact_reason, is_artifact, local_filter, similarity_key

log = logging.getLogger("citestream.qa.filter")

__all__ = ["FilterOutcome", "artifact_reason", "filter_facts", "is_artifact", "run_filter", "similarity_key",
           "validate_relevant_facts"]


@dataclass(frozen=True)
class FilterOutcome:
    record: RelevantFactsRecord
    rejected_reply: str | None = None
    """The raw LLM reply when it broke the contract (what the agent dead-letters)."""


def filter_facts(record: FactsRecord, policy: Policy, llm: LLMBackend | None = None) -> RelevantFactsRecord:
    return run_filter(record, policy, llm).record


def run_filter(record: FactsRecord, policy: Policy, llm: LLMBackend | None = None,
               max_attempts: int = 3) -> FilterOutcome:
    cap, floor = policy.retrieval.max_context_chunks, policy.relevance.fact_floor
    if llm is None or not record.facts:
        kept, dropped = local_filter(record.facts, cap, floor)
        return FilterOutcome(_record(record, kept, dropped, "local"))

    from ...llm.execution import execute  # the R3 wrapper: exact bytes, transient retries only

    prompt = build_filter_prompt(record.question, record.facts)
    result = execute(llm, record.request_id, prompt, sha256_hex(prompt), max_attempts)
    if result.generation_status != "OK":
        reason = f"LLM_CALL_FAILED: {result.error}"
        kept, dropped = local_filter(record.facts, cap, floor)
        return FilterOutcome(_record(record, kept, dropped, "local", fallback_reason=reason))
    try:
        validated = validate_relevant_facts(reply_payload(result.raw_model_text), record.facts)
        if validated.rejected_rows and not validated.facts:
            raise InvalidReply(f"all {validated.rejected_rows} rows broke the contract")
    except InvalidReply as exc:
        reason = f"LLM_REPLY_INVALID: {exc}"
        log.warning("phase B llm reply rejected request_id=%s: %s", record.request_id, exc)
        kept, dropped = local_filter(record.facts, cap, floor)
        return FilterOutcome(_record(record, kept, dropped, "local", fallback_reason=reason),
                             rejected_reply=result.raw_model_text)

    chosen = {f.key for f in validated.facts}
    kept, dropped = [], []
    for fact in record.facts:  # Phase A order: the filter selects, it does not re-rank
        if fact.key not in chosen:
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="NOT_SELECTED_BY_LLM"))
        elif len(kept) >= cap:
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason="MAX_CONTEXT_CHUNKS"))
        else:
            kept.append(fact)
    return FilterOutcome(_record(record, kept, dropped, "llm", rejected_rows=validated.rejected_rows))


def _record(record: FactsRecord, kept: list[Fact], dropped: list[DroppedFact], mode: str,
            fallback_reason: str | None = None, rejected_rows: int = 0) -> RelevantFactsRecord:
    no_answer = below_floor(kept, dropped, record.no_answer)
    return RelevantFactsRecord(
        **record.carry(), question=record.question, scope=record.scope, top_k=record.top_k, facts=kept,
        dropped=dropped, no_evidence=not kept, filter_mode=mode, filter_fallback_reason=fallback_reason,
        llm_rows_rejected=rejected_rows, fallback_used=record.fallback_used, no_answer=no_answer,
        reading=record.reading, sentence_scores=record.sentence_scores,
    )
