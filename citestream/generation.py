"""Generation: the R3 execution wrapper and one audit-ledger row per prompt sent to a model."""

from __future__ import annotations

import hashlib
import logging
import time

from .llm import LLMBackend, LLMError, TransientLLMError
from .models import GenerationRecord, LLMExecutionResult, PromptRecord
from .models.common import utcnow
from .store import Ledger, LedgerEntry

log = logging.getLogger(__name__)


def execute(backend: LLMBackend, request_id: str, prompt_text: str, prompt_sha256: str, max_attempts: int = 3,
            backoff_s: float = 0.5) -> LLMExecutionResult:
    """Send the exact prompt bytes; retry only transient failures, with the same bytes and the same model."""
    if hashlib.sha256(prompt_text.encode("utf-8")).hexdigest() != prompt_sha256:
        raise ValueError("prompt text does not match its prompt_sha256")
    started = time.monotonic()
    attempts, error = 0, None
    while attempts < max_attempts:
        attempts += 1
        try:
            reply = backend.complete(prompt_text)
        except TransientLLMError as exc:
            error = f"transient: {exc}"
            log.warning("llm transient failure request_id=%s prompt_sha256=%s attempt=%d: %s",
                        request_id, prompt_sha256, attempts, exc)
            time.sleep(backoff_s * 2 ** (attempts - 1))
            continue
        except LLMError as exc:
            error = f"permanent: {exc}"
            break
        total = None
        if reply.prompt_tokens is not None and reply.completion_tokens is not None:
            total = reply.prompt_tokens + reply.completion_tokens
        log.info("llm ok request_id=%s prompt_sha256=%s attempts=%d", request_id, prompt_sha256, attempts)
        return LLMExecutionResult(
            request_id=request_id, model_name=backend.model_name, prompt_sha256=prompt_sha256,
            generation_status="OK", raw_model_text=reply.text, finish_reason=reply.finish_reason, attempts=attempts,
            llm_latency_ms=round((time.monotonic() - started) * 1000, 3), prompt_tokens_actual=reply.prompt_tokens,
            completion_tokens_actual=reply.completion_tokens, total_tokens_actual=total,
        )
    return LLMExecutionResult(
        request_id=request_id, model_name=backend.model_name, prompt_sha256=prompt_sha256,
        generation_status="FAILED", attempts=attempts, llm_latency_ms=round((time.monotonic() - started) * 1000, 3),
        error=error,
    )


def generate(record: PromptRecord, backend: LLMBackend, ledger: Ledger, max_attempts: int = 3) -> GenerationRecord:
    bundle, prompt = record.answer_bundle, record.prompt
    if prompt.build_status != "OK" or prompt.prompt_sha256 is None:
        # NO_EVIDENCE and FAILED assemblies never reach a model (R2.2 NO_EVIDENCE semantics).
        status = "NO_EVIDENCE" if bundle.assembly_status == "NO_EVIDENCE" else "FAILED"
        return GenerationRecord(**record.carry(), question=record.question, scope=record.scope,
                                generation_status=status, answer_bundle=bundle, fallback_used=record.fallback_used)

    result = execute(backend, record.request_id, prompt.prompt_text, prompt.prompt_sha256, max_attempts)
    ledger.append(LedgerEntry(
        request_id=record.request_id, stage="generate", prompt_sha256=prompt.prompt_sha256,
        model=backend.model_name, policy_version=record.policy_version, index_version=record.index_version or "",
        created_at=utcnow(),
        payload={
            "question": record.question,
            "template_version": prompt.template_version,
            "answer_bundle": bundle.model_dump(mode="json"),
            "generation_status": result.generation_status,
            "output_sha256": hashlib.sha256(result.raw_model_text.encode("utf-8")).hexdigest(),
        },
    ))
    return GenerationRecord(
        **record.carry(), question=record.question, scope=record.scope, generation_status=result.generation_status,
        answer_bundle=bundle, prompt_sha256=prompt.prompt_sha256, llm=result, fallback_used=record.fallback_used,
    )
