"""The R3 execution wrapper: the exact prompt bytes go to one model; only transient failures are retried, with
the same bytes and the same model; the reply is recorded untouched. Logs carry hashes and counts, never prompt
or reply text. A reply longer than ``MAX_REPLY_CHARS`` is a failed generation: no pattern ever reads it. Used by
generation and by the LLM filter.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..core.bounds import MAX_REPLY_CHARS
from ..core.hashing import sha256_hex
from ..models import LLMExecutionResult
from ..core.scrub import scrub
from .base import LLMBackend, LLMError, TransientLLMError

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
        if len(reply.text) > MAX_REPLY_CHARS:
            error = f"permanent: the reply holds {len(reply.text)} characters, more than the {MAX_REPLY_CHARS} read"
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
