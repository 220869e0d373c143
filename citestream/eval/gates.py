"""The CI gates of qa-contract-v1 §3, applied to the metrics of the baseline and the perturbation set."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from ..models.ops import FALLBACK_ALERT_MESSAGE

FALLBACK_ALERT = FALLBACK_ALERT_MESSAGE
"""qa-contract-v1 §3, exact: printed when fallback_used_rate_answerable breaches its gate."""

PASS_RATE_MIN = {"baseline": 0.95, "perturb": 0.90}
HALLUCINATION_MAX = 0.0
FALLBACK_ANSWERABLE_MAX = 0.15
INCORRECT_REFUSAL_MAX = 0.02


class GateResult(BaseModel):
    role: str
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


def evaluate_gates(by_role: Mapping[str, Mapping[str, float]]) -> list[GateResult]:
    """Every gate for each role present (``baseline`` and/or ``perturb``), in contract order."""
    out = []
    for role in ("baseline", "perturb"):
        m = by_role.get(role)
        if m is None:
            continue
        out += [
            _gate(role, "pass_rate", ">=", PASS_RATE_MIN[role], m["pass_rate"]),
            _gate(role, "hallucination", "<=", HALLUCINATION_MAX, m["hallucination"]),
            _gate(role, "fallback_used_rate_answerable", "<=", FALLBACK_ANSWERABLE_MAX,
                  m["fallback_used_rate_answerable"], FALLBACK_ALERT),
            _gate(role, "incorrect_refusal", "<=", INCORRECT_REFUSAL_MAX, m["incorrect_refusal"]),
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
