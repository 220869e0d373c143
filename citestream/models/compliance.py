"""`compliance.requests` → `compliance.reports` (semantic-qa-compliance-contract)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .common import Contract, Envelope, InputTrace, Name, Sealed
from .limits import MAX_CLAIM_CHARS, MAX_CONSTRAINTS, MAX_NAME_CHARS


class BoundConstraint(Contract):
    id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: Literal["must", "should", "exclusion"]
    text: str = Field(max_length=MAX_CLAIM_CHARS)


class ComplianceRequest(Envelope):
    """Key: ``request_id``. A generated document (JSON) and the constraints bound to it.

    ``document`` is free-form JSON: the record's byte cap and the decoder's
    nesting limit bound it (``streams.faust_app``).
    """

    policy_version: Name | None = None
    trace: InputTrace = Field(default_factory=list)
    document: dict[str, Any]
    constraints: list[BoundConstraint] = Field(max_length=MAX_CONSTRAINTS)
    evaluator: Literal["offline", "llm"] = "offline"


class ComplianceReportRecord(Envelope, Sealed):
    """Key: ``request_id``. ``report`` has passed the qa_semantic_compliance_output.v1 validator."""

    policy_version: Name | None = None
    report: dict[str, Any] = Field(description=(
        "A qa_semantic_compliance_output.v1 report, validated against the request's constraints before emission; "
        "its JSON Schema ships as citestream/compliance/qa_semantic_compliance_output.v1.json"))
    evaluator: Literal["offline", "llm"]
