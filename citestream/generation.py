"""Generation: the R3 execution wrapper and one audit-ledger row per prompt sent to a model.

R3 in one sentence: the exact prompt bytes go to one model; only transient
failures are retried, with the same bytes and the same model; the reply is
recorded untouched. Logs carry hashes and counts, never prompt or reply text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from .core.hashing import sha256_hex
from .llm import LLMBackend, LLMError, TransientLLMError
from .models import GenerationRecord, LLMExecutionResult, PromptRecord
from .models.common import utcnow
from .prompt import template_sha256
from .scrub import scrub
from .store import Ledger, LedgerEntry

log = logging.getLogger(__name__)
MAX_BACKOFF_S = 10.0


def execute(backend: LLMBackend, request_id: str, prompt_text: str, prompt_sha256: str, max_attempts: int = 3,
            backoff_s: float = 0.5, sleep: Callable[[float], None] = time.sleep) -> LLMExecutionResult:
    """Send the exact prompt bytes; retry only transient failures, with the same bytes and the same model."""
    if sha256_hex(prompt_text) != prompt_sha256:
        raise ValueError("prompt text does not match its prompt_sha256")
    model = backend.model_name  # frozen for the whole execution: never switched on failure
    started = time.monotonic()
    attempts, error = 0, None
    while attempts < max_attempts:
        attempts += 1
        try:
            reply = backend.complete(prompt_text)
        except TransientLLMError as exc:
            error = f"transient: {exc}"
            log.warning("llm transient failure request_id=%s model=%s prompt_sha256=%s attempt=%d/%d error=%s",
                        request_id, model, prompt_sha256, attempts, max_attempts, type(exc).__name__)
            if attempts < max_attempts:
                wait = exc.retry_after_s if exc.retry_after_s is not None else backoff_s * 2 ** (attempts - 1)
                sleep(min(max(wait, 0.0), MAX_BACKOFF_S))
            continue
        except LLMError as exc:
            error = f"permanent: {exc}"
            break
        except Exception as exc:  # a backend bug is a failed generation, recorded like any other
            error = f"permanent: {type(exc).__name__}: {exc}"
            break
        total = None
        if reply.prompt_tokens is not None and reply.completion_tokens is not None:
            total = reply.prompt_tokens + reply.completion_tokens
        result = LLMExecutionResult(
            request_id=request_id, model_name=model, prompt_sha256=prompt_sha256,
            generation_status="OK", raw_model_text=reply.text, finish_reason=reply.finish_reason, attempts=attempts,
            llm_latency_ms=round((time.monotonic() - started) * 1000, 3), prompt_tokens_actual=reply.prompt_tokens,
            completion_tokens_actual=reply.completion_tokens, total_tokens_actual=total,
        )
        _log_result(result)
        return result
    result = LLMExecutionResult(
        request_id=request_id, model_name=model, prompt_sha256=prompt_sha256,
        generation_status="FAILED", attempts=attempts, llm_latency_ms=round((time.monotonic() - started) * 1000, 3),
        error=scrub(error or "no attempt made", 500),  # travels on qa.generations and into failure_reason
    )
    _log_result(result)
    return result


def _log_result(result: LLMExecutionResult) -> None:
    """Hashes and counts only (R3 safety logging rule)."""
    log.info(
        "llm %s request_id=%s model=%s prompt_sha256=%s output_sha256=%s output_chars=%d finish_reason=%s "
        "attempts=%d latency_ms=%.1f prompt_tokens=%s completion_tokens=%s total_tokens=%s",
        result.generation_status, result.request_id, result.model_name, result.prompt_sha256,
        sha256_hex(result.raw_model_text), len(result.raw_model_text), result.finish_reason, result.attempts,
        result.llm_latency_ms, result.prompt_tokens_actual, result.completion_tokens_actual,
        result.total_tokens_actual,
    )


def ledger_payload(record: PromptRecord, result: LLMExecutionResult) -> dict:
    """What `ledger replay` needs (question, template, bundle) and what the execution produced, as hashes."""
    return {
        "question": record.question,
        "template_version": record.prompt.template_version,
        "template_sha256": template_sha256(),
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
                                no_answer=record.no_answer)

    result = execute(backend, record.request_id, prompt.prompt_text, prompt.prompt_sha256, max_attempts, backoff_s)
    ledger.append(LedgerEntry(
        request_id=record.request_id, stage="generate", prompt_sha256=prompt.prompt_sha256,
        model=result.model_name, policy_version=record.policy_version, index_version=record.index_version or "",
        created_at=utcnow(), payload=ledger_payload(record, result),
    ))
    return GenerationRecord(
        **record.carry(), question=record.question, scope=record.scope, generation_status=result.generation_status,
        answer_bundle=bundle, prompt_sha256=prompt.prompt_sha256, llm=result, fallback_used=record.fallback_used,
        no_answer=record.no_answer,
    )
