"""The LLM evaluator: one call returns the whole report (the contract's design); the validator judges it.

The call goes through the R3 wrapper (``llm.execution.execute``), as generation and the LLM filter's do, so the
reply cap (``MAX_REPLY_CHARS``) holds here too: a longer reply is a failed call, like an outage (STAGE_ERROR). The
reply is read with their parser (``core.replies.parse_reply``: strict JSON, a repeated key is malformed) and
returned as is, apart from ``correlation_id`` and ``meta`` which the caller owns; nothing is repaired, so a report
that breaks a rule is dead-lettered with that rule rather than silently fixed. A string holding a lone surrogate
(a ``\\ud800`` escape) is a malformed reply: such a report could not be sealed (issue N4).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from ..core.hashing import sha256_hex
from ..core.replies import MalformedReply, parse_reply
from ..llm import LLMBackend, LLMError
from ..llm.execution import execute
from ..models.compliance import BoundConstraint
from .validator import SCHEMA_VERSION

PROMPT_VERSION = "qa_semantic_compliance_v1.0"

PROMPT = """You are a semantic QA validator. Evaluate the generated DOCUMENT against every BOUND CONSTRAINT exactly once.
Return JSON only, schema_version "{schema_version}", with: gate ("pass"|"fail"), summary {{errors, warnings, infos,
expected_constraints, evaluated_constraints, blocked_reasons[]}}, coverage {{expected_count, evaluated_count, items[
{{constraint_id, status, evidence_pointers[], notes?}}]}}, findings[{{severity, code, constraint_id, message,
evidence_pointers[] (at least one), suggested_fix?}}].
Statuses: satisfied | missing | contradicted | reopened | not_evaluated.
Rules: one coverage item per constraint id below and no other ids; gate is "fail" if any item is contradicted or reopened,
or missing for a must or exclusion constraint; contradicted → finding error BOUND_CONTRADICTION; reopened → error
BOUND_REOPENED; missing → BOUND_MISSING_EXPLICIT; not_evaluated → warning TRACEABILITY_GAP; summary counts equal the
findings' severities. Evidence pointers are JSONPaths into the document, e.g. $.unknowns[0].question.
A question that accepts a decision and asks for details is a follow-up (allowed); one that challenges whether the
decision was right reopens it.

### BOUND CONSTRAINTS
{constraints}

### DOCUMENT
{document}
"""


def render_prompt(document: dict, constraints: Sequence[BoundConstraint]) -> str:
    lines = "\n".join(f"- id={c.id} kind={c.kind}: {c.text}" for c in constraints)
    return PROMPT.format(schema_version=SCHEMA_VERSION, constraints=lines,
                         document=json.dumps(document, indent=1, sort_keys=True))


def llm_report(correlation_id: str, document: dict, constraints: Sequence[BoundConstraint], backend: LLMBackend,
               policy_version: str) -> dict:
    """Raises ValueError when the reply is not a JSON object, or holds a lone surrogate (the caller dead-letters
    it as REPORT_INVALID); LLMError when the call failed or the reply is over the cap (STAGE_ERROR)."""
    started = time.monotonic()
    prompt = render_prompt(document, constraints)
    result = execute(backend, correlation_id, prompt, sha256_hex(prompt))
    if result.generation_status != "OK":
        raise LLMError(f"the LLM call failed: {result.error}")
    try:
        report = parse_reply(result.raw_model_text)
    except MalformedReply as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(report, dict):
        raise ValueError(f"the reply is a JSON {type(report).__name__}, not an object")
    try:  # one linear pass; paired surrogate escapes decode to one character and pass
        json.dumps(report, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("the reply holds a lone surrogate (a string that is not Unicode text)") from None
    report["correlation_id"] = correlation_id
    report["meta"] = {"model": result.model_name, "prompt_version": PROMPT_VERSION, "policy_version": policy_version,
                      "latency_ms": round((time.monotonic() - started) * 1000, 3),
                      "input_tokens": result.prompt_tokens_actual, "output_tokens": result.completion_tokens_actual}
    return report
