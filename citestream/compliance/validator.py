"""The parser/validator for ``qa_semantic_compliance_output.v1``: the JSON Schema, then rules 1–6.

Every violation names the rule it breaks (and the parser rejection 1–7 of the
contract where one applies), so a dead-lettered report says why in words.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from jsonschema import Draft202012Validator

from ..models.compliance import BoundConstraint

SCHEMA_VERSION = "qa_semantic_compliance_output.v1"
SCHEMA_FILE = "qa_semantic_compliance_output.v1.json"

RULE_NAMES = {
    "schema": "JSON Schema",
    "rule 1": "coverage completeness",
    "rule 2": "gate decision",
    "rule 3": "findings consistency",
    "rule 4": "constraint id validity",
    "rule 5": "evidence pointers required",
    "rule 6": "summary counts",
}

# Rule 3: the finding a coverage status requires (codes accepted, severities accepted).
# PROMOTION_RULE_VIOLATION is a kind of contradiction: the contract's own failing example reports a
# should-answer promoted to a binding constraint as "contradicted" with that code.
REQUIRED_FINDING = {
    "contradicted": ({"BOUND_CONTRADICTION", "PROMOTION_RULE_VIOLATION"}, {"error"}),
    "reopened": ({"BOUND_REOPENED"}, {"error"}),
    "missing": ({"BOUND_MISSING_EXPLICIT"}, {"error", "warning"}),
    "not_evaluated": ({"TRACEABILITY_GAP"}, {"warning"}),
}


@dataclass(frozen=True)
class Violation:
    rule: str                  # "schema" or "rule 1".."rule 6"
    message: str
    rejection: int | None = None  # the contract's parser rejection 1..7, when it is one

    def __str__(self) -> str:
        label = f"{self.rule} ({RULE_NAMES[self.rule]})"
        if self.rejection:
            label += f", parser rejection {self.rejection}"
        return f"{label}: {self.message}"


class ReportInvalid(ValueError):
    def __init__(self, violations: list[Violation]):
        self.violations = violations
        super().__init__("; ".join(map(str, violations)))

    @property
    def rules(self) -> list[str]:
        return sorted({v.rule for v in self.violations})


@lru_cache(maxsize=1)
def report_schema() -> dict:
    return json.loads(files("citestream.compliance").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def _schema_violations(report: dict) -> list[Violation]:
    out = []
    for err in sorted(Draft202012Validator(report_schema()).iter_errors(report), key=lambda e: list(e.path)):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.path)
        if list(err.path) == ["schema_version"]:
            out.append(Violation("schema", f"schema_version must be {SCHEMA_VERSION!r}, got "
                                           f"{report.get('schema_version')!r}", 1))
        elif len(err.path) == 3 and err.path[0] == "findings" and err.path[2] == "evidence_pointers" \
                and err.validator == "minItems":
            out.append(Violation("rule 5", f"{path} is empty: every finding needs at least one evidence pointer", 5))
        else:
            out.append(Violation("schema", f"{path}: {err.message}"))
    return out


def validate_report(report: dict, constraints: Sequence[BoundConstraint]) -> dict:
    """Return ``report`` unchanged if it is valid for these bound constraints; else raise ReportInvalid."""
    violations = report_violations(report, constraints)
    if violations:
        raise ReportInvalid(violations)
    return report


def report_violations(report: dict, constraints: Sequence[BoundConstraint]) -> list[Violation]:
    if not isinstance(report, dict):
        return [Violation("schema", f"the report must be a JSON object, got {type(report).__name__}")]
    out = _schema_violations(report)
    if out:
        return out  # the rules below read the structure the schema guarantees
    kinds = {c.id: c.kind for c in constraints}
    summary, coverage, findings = report["summary"], report["coverage"], report["findings"]
    items = coverage["items"]

    # Rule 1: coverage completeness
    if coverage["expected_count"] != len(kinds):
        out.append(Violation("rule 1", f"coverage.expected_count is {coverage['expected_count']} but "
                                       f"{len(kinds)} bound constraints were provided", 2))
    seen = Counter(i["constraint_id"] for i in items)
    for cid in kinds:
        if seen[cid] == 0:
            out.append(Violation("rule 1", f"no coverage item for bound constraint {cid!r}", 3))
        elif seen[cid] > 1:
            out.append(Violation("rule 1", f"{seen[cid]} coverage items for {cid!r}; exactly one is required"))
    for cid in seen:
        if cid not in kinds:
            out.append(Violation("rule 4", f"coverage item for unknown constraint id {cid!r}"))
    if summary["expected_constraints"] != coverage["expected_count"]:
        out.append(Violation("rule 1", f"summary.expected_constraints ({summary['expected_constraints']}) != "
                                       f"coverage.expected_count ({coverage['expected_count']})"))
    if summary["evaluated_constraints"] != coverage["evaluated_count"]:
        out.append(Violation("rule 1", f"summary.evaluated_constraints ({summary['evaluated_constraints']}) != "
                                       f"coverage.evaluated_count ({coverage['evaluated_count']})"))
    evaluated = sum(i["status"] != "not_evaluated" for i in items)
    if coverage["evaluated_count"] != evaluated:
        out.append(Violation("rule 1", f"coverage.evaluated_count is {coverage['evaluated_count']} but {evaluated} "
                                       "items have a status other than not_evaluated"))

    # Rule 2: gate decision
    if report["gate"] == "pass":
        for item in items:
            status, kind = item["status"], kinds.get(item["constraint_id"])
            if status in ("contradicted", "reopened"):
                out.append(Violation("rule 2", f"gate is pass but {item['constraint_id']!r} is {status}", 6))
            elif status == "missing" and kind in ("must", "exclusion"):
                out.append(Violation("rule 2", f"gate is pass but {kind} constraint "
                                               f"{item['constraint_id']!r} is missing"))

    # Rule 3: findings consistency
    for item in items:
        required = REQUIRED_FINDING.get(item["status"])
        if required is None:
            continue
        codes, severities = required
        if not any(f["constraint_id"] == item["constraint_id"] and f["code"] in codes and f["severity"] in severities
                   for f in findings):
            out.append(Violation("rule 3", f"{item['constraint_id']!r} is {item['status']} but no finding "
                                           f"{{severity: {'|'.join(sorted(severities))}, code: "
                                           f"{'|'.join(sorted(codes))}}} reports it"))

    # Rule 4: constraint id validity
    for n, finding in enumerate(findings):
        if finding["constraint_id"] not in kinds:
            out.append(Violation("rule 4", f"$.findings[{n}].constraint_id {finding['constraint_id']!r} is not "
                                           "one of the provided bound constraint ids", 4))

    # Rule 6: summary counts
    counted = Counter(f["severity"] for f in findings)
    for severity, field in (("error", "errors"), ("warning", "warnings"), ("info", "infos")):
        if summary[field] != counted[severity]:
            out.append(Violation("rule 6", f"summary.{field} is {summary[field]} but {counted[severity]} "
                                           f"findings have severity {severity!r}", 7))
    return out
