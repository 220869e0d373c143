"""`compliance.requests` → `compliance.reports` (semantic-qa-compliance-contract)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import Contract, Envelope


class BoundConstraint(Contract):
    id: str = Field(min_length=1)
    kind: Literal["must", "should", "exclusion"]
    text: str


class ComplianceRequest(Envelope):
    """Key: ``request_id``. A generated document (JSON) and the constraints bound to it."""

    policy_version: str | None = None
    document: dict[str, Any]
    constraints: list[BoundConstraint]
    evaluator: Literal["offline", "llm"] = "offline"


class ComplianceReportRecord(Envelope):
    """Key: ``request_id``. ``report`` has passed the qa_semantic_compliance_output.v1 validator."""

    policy_version: str | None = None
    report: dict[str, Any] = Field(description=(
        "A qa_semantic_compliance_output.v1 report, validated against the request's constraints before emission; "
        "its JSON Schema ships as citestream/compliance/qa_semantic_compliance_output.v1.json"))
    evaluator: Literal["offline", "llm"]
