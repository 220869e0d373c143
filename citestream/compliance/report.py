"""Classifications → a ``qa_semantic_compliance_output.v1`` report that satisfies rules 1–6 by construction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .rule_evaluator import Classification
from .validator import SCHEMA_VERSION

PROMPT_VERSION = "qa_semantic_compliance_offline_v1"

# status → (severity for must/exclusion, severity for should, code)
_FINDING = {
    "contradicted": ("error", "error", "BOUND_CONTRADICTION"),
    "reopened": ("error", "error", "BOUND_REOPENED"),
    "missing": ("error", "warning", "BOUND_MISSING_EXPLICIT"),
    "not_evaluated": ("warning", "warning", "TRACEABILITY_GAP"),
}


def input_pointer(index: int) -> str:
    """Where nothing in the document can be pointed at: the constraint in the input payload."""
    return f"$.constraints[{index}].text"


def _finding(n: int, c: Classification) -> dict | None:
    if c.status not in _FINDING:
        return None
    hard, soft, code = _FINDING[c.status]
    if c.status == "contradicted" and "promoted" in c.reason:
        code = "PROMOTION_RULE_VIOLATION"
    severity = soft if c.constraint.kind == "should" else hard
    return {
        "severity": severity, "code": code, "constraint_id": c.constraint.id,
        "message": f"{c.constraint.kind} constraint {c.constraint.id} is {c.status}: {c.reason}",
        "evidence_pointers": c.pointers or [input_pointer(n)],
    }


def _fails_gate(c: Classification) -> bool:
    return c.status in ("contradicted", "reopened") or (
        c.status == "missing" and c.constraint.kind in ("must", "exclusion"))


def build_report(correlation_id: str, classifications: Sequence[Classification], *, model: str,
                 policy_version: str, latency_ms: float, prompt_version: str = PROMPT_VERSION) -> dict:
    items, findings = [], []
    for n, c in enumerate(classifications):
        item = {"constraint_id": c.constraint.id, "status": c.status, "evidence_pointers": list(c.pointers)}
        if c.reason:
            item["notes"] = c.reason
        items.append(item)
        finding = _finding(n, c)
        if finding:
            findings.append(finding)
    severities = Counter(f["severity"] for f in findings)
    evaluated = sum(c.status != "not_evaluated" for c in classifications)
    blocked = [f"{c.constraint.id} {c.status}" for c in classifications if _fails_gate(c)]
    return {
        "schema_version": SCHEMA_VERSION,
        "correlation_id": correlation_id,
        "gate": "fail" if blocked else "pass",
        "summary": {"errors": severities["error"], "warnings": severities["warning"], "infos": severities["info"],
                    "expected_constraints": len(classifications), "evaluated_constraints": evaluated,
                    "blocked_reasons": blocked},
        "coverage": {"expected_count": len(classifications), "evaluated_count": evaluated, "items": items},
        "findings": findings,
        "meta": {"model": model, "prompt_version": prompt_version, "policy_version": policy_version,
                 "latency_ms": round(latency_ms, 3), "input_tokens": None, "output_tokens": None},
    }
