"""Generation: the prompt through the R3 execution wrapper (``llm.execution``), one audit-ledger row per prompt
sent to a model. The extractive backend reads the sentence scores the record carries (``relevance.carried``); any
it adds go on to validate."""

from __future__ import annotations

from ...core.hashing import sha256_hex
from ...llm import LLMBackend
from ...llm.execution import execute
from ...llm.extractive import reading_headings
from ...models import GenerationRecord, LLMExecutionResult, PromptRecord
from ...models.common import utcnow
from ...relevance import carrying_record
from ...store import Ledger, LedgerEntry


def ledger_payload(record: PromptRecord, result: LLMExecutionResult) -> dict:
    """What `ledger replay` needs (question, template, bundle) and what the execution produced, as hashes."""
    return {
        "question": record.question,
        "template_version": record.prompt.template_version,
        "template_sha256": record.prompt.template_sha256,
        "answer_bundle": record.answer_bundle.model_dump(mode="json"),
        "generation_status": result.generation_status,
        "output_sha256": sha256_hex(result.raw_model_text),
        "finish_reason": result.finish_reason,
        "attempts": result.attempts,
        "llm_latency_ms": round(result.llm_latency_ms),
        "prompt_tokens_actual": result.prompt_tokens_actual,
        "completion_tokens_actual": result.completion_tokens_actual,
    }


def generate(record: PromptRecord, backend: LLMBackend, ledger: Ledger, max_attempts: int = 3,
             backoff_s: float = 0.5) -> GenerationRecord:
    bundle, prompt = record.answer_bundle, record.prompt
    if prompt.build_status != "OK" or prompt.prompt_sha256 is None:
        # NO_EVIDENCE and FAILED assemblies never reach a model (R2.2 NO_EVIDENCE semantics).
        status = "NO_EVIDENCE" if bundle.assembly_status == "NO_EVIDENCE" else "FAILED"
        return GenerationRecord(**record.carry(), question=record.question, scope=record.scope,
                                generation_status=status, answer_bundle=bundle, fallback_used=record.fallback_used,
                                no_answer=record.no_answer, reading=record.reading,
                                sentence_scores=record.sentence_scores)

    with carrying_record(record.sentence_scores) as carried, reading_headings(bundle.selected_evidence):
        result = execute(backend, record.request_id, prompt.prompt_text, prompt.prompt_sha256, max_attempts,
                         backoff_s)
    ledger.append(LedgerEntry(
        request_id=record.request_id, stage="generate", prompt_sha256=prompt.prompt_sha256,
        model=result.model_name, policy_version=record.policy_version, index_version=record.index_version or "",
        created_at=utcnow(), payload=ledger_payload(record, result),
    ))
    return GenerationRecord(
        **record.carry(), question=record.question, scope=record.scope, generation_status=result.generation_status,
        answer_bundle=bundle, prompt_sha256=prompt.prompt_sha256, llm=result, fallback_used=record.fallback_used,
        no_answer=record.no_answer, reading=record.reading,
        sentence_scores=carried.record() if carried is not None else None,
    )
