"""The LLM evaluator: one call returns the whole report (the contract's design); the validator judges it.

The reply is parsed as JSON and returned as is, apart from ``correlation_id``
and ``meta`` which the caller owns; nothing is repaired, so a report that breaks
a rule is dead-lettered with that rule rather than silently fixed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from ..llm import LLMBackend
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
    """Raises ValueError when the reply is not a JSON object (the caller dead-letters it)."""
    started = time.monotonic()
    reply = backend.complete(render_prompt(document, constraints))
    report = json.loads(reply.text)
    if not isinstance(report, dict):
        raise ValueError(f"the reply is a JSON {type(report).__name__}, not an object")
    report["correlation_id"] = correlation_id
    report["meta"] = {"model": backend.model_name, "prompt_version": PROMPT_VERSION, "policy_version": policy_version,
                      "latency_ms": round((time.monotonic() - started) * 1000, 3),
                      "input_tokens": reply.prompt_tokens, "output_tokens": reply.completion_tokens}
    return report
