"""The eval report: one JSON document for a run (every set, its metrics, items and the gates), a table, a diff."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from datetime import datetime, UTC
from math import comb
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from .gates import GateResult, gate_lines
from .score import ItemResult
from .sets import blind

TABLE_METRICS = ("items", "pass_rate", "answerable_pass_rate", "correct_refusal", "incorrect_refusal",
                 "hallucination", "citation_precision", "answering_share", "phase_a_fallback_used_count",
                 "phase_a_fallback_used_rate",
                 "fallback_used_rate_answerable", "no_reply_count", "latency_p50_s")


class SetReport(BaseModel):
    name: str
    role: str = Field(description="baseline, perturb or qa-v2: which gates apply")
    metrics: dict[str, float | int]
    per_category: dict[str, dict[str, float | int]]
    per_perturbation: dict[str, dict[str, float | int]] = Field(default_factory=dict)
    items: list[ItemResult]


class EvalReport(BaseModel):
    through: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    policy_version: str | None = None
    index_version: str | None = None
    sets: dict[str, SetReport]
    gates: list[GateResult] = Field(default_factory=list)

    @property
    def gates_passed(self) -> bool:
        return all(g.passed for g in self.gates)


def write_json(report: EvalReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report.model_dump_json(indent=2) + "\n")
    return path


def load_json(path: str | Path) -> EvalReport:
    return EvalReport.model_validate_json(Path(path).read_text())


def _fmt(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def render(report: EvalReport) -> str:
    """Metrics side by side per set, pass rate per category, the failed items, then the gates."""
    names = list(report.sets)
    width = max(len(m) for m in TABLE_METRICS) + 2
    lines = [f"eval through {report.through} (policy {report.policy_version}, index {report.index_version})", "",
             "metric".ljust(width) + "".join(n.rjust(22) for n in names)]
    for metric in TABLE_METRICS:
        lines.append(metric.ljust(width) + "".join(_fmt(report.sets[n].metrics.get(metric, "")).rjust(22)
                                                   for n in names))
    for name, s in report.sets.items():
        lines += ["", f"{name}: per category (passed/items)"]
        for group in (s.per_category, s.per_perturbation):
            for key, row in group.items():
                lines.append(f"  {key:<22}{row['passed']:>4}/{row['items']:<4}{row['pass_rate']:.2f}")
        if blind(name):
            lines.append(f"{name}: held-out test split, items not listed")
            continue
        failed = [r for r in s.items if not r.passed]
        if failed:
            lines.append(f"{name}: failed items")
            for r in failed:
                detail = r.failure_reason or (", ".join(r.cited[:3]) if r.cited else "")
                lines.append(f"  {r.id:<6}{r.outcome:<22}{detail[:90]}")
        halluc = [r for r in s.items if r.hallucinated]
        for r in halluc:
            lines.append(f"  {r.id:<6}HALLUCINATED: {r.hallucinated_sentences[0][:100]}")
    if report.gates:
        lines += ["", "gates (qa-contract-v1 §3 on the golden sets, qa-v2 targets on the qa-v2 splits):"]
        lines += gate_lines(report.gates)
    return "\n".join(lines)


K = TypeVar("K", bound=Hashable)


def sign_test(gained: int, lost: int) -> float:
    """Two-sided exact sign test: how often ``gained`` items won and ``lost`` lost, or a split further from even, if
    each changed item were as likely to go either way. Two trainings of one judge differ by 10 gained against 7 lost
    (p 0.63) on dev; a change worth keeping leans further (docs/experiments/2026-12-02-ranked-second.md)."""
    n = gained + lost
    if not n:
        return 1.0
    tail = sum(comb(n, k) for k in range(max(gained, lost), n + 1))
    return min(1.0, 2 * tail / 2 ** n)


def changed_items(before: Mapping[K, bool], after: Mapping[K, bool]) -> tuple[int, int]:
    """(gained, lost): items right only after, right only before (right: ``ItemResult.passed``)."""
    shared = before.keys() & after.keys()
    return sum(after[i] and not before[i] for i in shared), sum(before[i] and not after[i] for i in shared)


def compare(old: EvalReport, new: EvalReport) -> str:
    """Metric deltas (new − old) for every set in both reports, the items that became right or wrong with the sign
    test's p, and the items whose outcome changed."""
    lines = []
    for name in [n for n in new.sets if n in old.sets]:
        o, n = old.sets[name], new.sets[name]
        lines += [f"{name}: {'metric':<32}{'old':>10}{'new':>10}{'delta':>10}"]
        for metric in TABLE_METRICS:
            a, b = o.metrics.get(metric), n.metrics.get(metric)
            if a is None or b is None:
                continue
            delta = b - a
            sign = "+" if delta > 0 else ""
            lines.append(f"  {metric:<38}{_fmt(a):>10}{_fmt(b):>10}{sign + _fmt(round(delta, 4)):>10}")
        gained, lost = changed_items({r.id: r.passed for r in o.items}, {r.id: r.passed for r in n.items})
        lines.append(f"  right: {gained} gained, {lost} lost (sign test p {sign_test(gained, lost):.2f})")
        before = {r.id: r.outcome for r in o.items}
        changed = [(r.id, before[r.id], r.outcome) for r in n.items if r.id in before and before[r.id] != r.outcome]
        if blind(name):
            lines.append(f"  {len(changed)} items changed outcome (held-out test split: not listed)")
            changed = []
        for item_id, was, now in changed:
            lines.append(f"  changed {item_id}: {was} -> {now}")
        lines.append("")
    only = sorted(set(old.sets) ^ set(new.sets))
    if only:
        lines.append(f"sets in only one report: {', '.join(only)}")
    return "\n".join(lines).rstrip() + "\n"
