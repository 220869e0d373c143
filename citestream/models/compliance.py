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
    report: dict[str, Any]
    evaluator: Literal["offline", "llm"]
