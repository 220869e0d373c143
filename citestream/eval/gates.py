"""The gates: qa-contract-v1 §3 on the baseline and perturbation sets; the qa-v2 targets on the qa-v2 splits
(answerable pass ≥ 0.80, unanswerable refused ≥ 0.92, incorrect refusal ≤ 0.08, citation precision ≥ 0.85,
no hallucination: the targets the second relevance issue set in place of the first one's 0.90 and 0.05)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from ..models.ops import FALLBACK_ALERT_MESSAGE

FALLBACK_ALERT = FALLBACK_ALERT_MESSAGE
"""qa-contract-v1 §3, exact: printed when fallback_used_rate_answerable breaches its gate."""

PASS_RATE_MIN = {"baseline": 0.95, "perturb": 0.90}
HALLUCINATION_MAX = 0.0
FALLBACK_ANSWERABLE_MAX = 0.15
INCORRECT_REFUSAL_MAX = 0.02
QA_V2 = {"answerable_pass_rate": (">=", 0.80), "correct_refusal": (">=", 0.92), "incorrect_refusal": ("<=", 0.08),
         "citation_precision": (">=", 0.85), "hallucination": ("<=", 0.0)}


class GateResult(BaseModel):
    role: str = Field(description="the set the gate applies to")
    metric: str
    op: str
    threshold: float
    value: float
    passed: bool
    message: str | None = None


def _gate(role: str, metric: str, op: str, threshold: float, value: float, message: str | None = None) -> GateResult:
    passed = value >= threshold if op == ">=" else value <= threshold
    return GateResult(role=role, metric=metric, op=op, threshold=threshold, value=value, passed=passed,
                      message=None if passed else message)


def evaluate_gates(sets: Mapping[str, tuple[str, Mapping[str, float]]]) -> list[GateResult]:
    """Every gate of each set's role (``baseline``, ``perturb``, ``qa-v2``), in contract order; ``sets`` maps a
    set's name to its role and metrics."""
    out = []
    for name, (role, m) in sets.items():
        if role == "qa-v2":
            out += [_gate(name, metric, op, threshold, m[metric]) for metric, (op, threshold) in QA_V2.items()]
            continue
        out += [
            _gate(name, "pass_rate", ">=", PASS_RATE_MIN[role], m["pass_rate"]),
            _gate(name, "hallucination", "<=", HALLUCINATION_MAX, m["hallucination"]),
            _gate(name, "fallback_used_rate_answerable", "<=", FALLBACK_ANSWERABLE_MAX,
                  m["fallback_used_rate_answerable"], FALLBACK_ALERT),
            _gate(name, "incorrect_refusal", "<=", INCORRECT_REFUSAL_MAX, m["incorrect_refusal"]),
        ]
    return out


def gate_lines(results: list[GateResult]) -> list[str]:
    """One line per gate; a breached fallback gate is followed by the contract's exact alert text."""
    lines = []
    for g in results:
        state = "PASS" if g.passed else "FAIL"
        lines.append(f"[{state}] {g.role} {g.metric} = {g.value:.4f} (gate {g.op} {g.threshold:.2f})")
        if g.message:
            lines.append(g.message)
    return lines
