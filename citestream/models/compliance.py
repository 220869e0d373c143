"""`compliance.requests` → `compliance.reports` (semantic-qa-compliance-contract)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from .common import BoundToRequest, Contract, Envelope, InputTrace, Name, Sealed
from .limits import (
    MAX_CLAIM_CHARS, MAX_CONSTRAINTS, MAX_DOCUMENT_KEY_CHARS, MAX_DOCUMENT_LEAF_CHARS, MAX_DOCUMENT_LEAVES,
    MAX_NAME_CHARS,
)


def _check_strings(value: Any, counted: list[int]) -> None:
    """Every string of ``value`` within its cap, and not more than ``MAX_DOCUMENT_LEAVES`` of them."""
    if isinstance(value, str):
        counted[0] += 1
        if len(value) > MAX_DOCUMENT_LEAF_CHARS:
            raise ValueError(f"a string of the document holds more than {MAX_DOCUMENT_LEAF_CHARS} characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            if len(key) > MAX_DOCUMENT_KEY_CHARS:
                raise ValueError(f"a key of the document holds more than {MAX_DOCUMENT_KEY_CHARS} characters")
            _check_strings(item, counted)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, counted)
    if counted[0] > MAX_DOCUMENT_LEAVES:
        raise ValueError(f"the document holds more than {MAX_DOCUMENT_LEAVES} strings")


class BoundConstraint(Contract):
    id: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    kind: Literal["must", "should", "exclusion"]
    text: str = Field(max_length=MAX_CLAIM_CHARS)


class ComplianceRequest(Envelope):
    """Key: ``request_id``. A generated document (JSON) and the constraints bound to it.

    ``document`` is free-form JSON: the record's byte cap and the decoder's
    nesting limit bound it (``streams.faust_app``), and each of its strings and
    keys, and their number, are capped here (the evaluator reads each string
    with its patterns and against every constraint).
    """

    policy_version: Name | None = None
    trace: InputTrace = Field(default_factory=list)
    document: dict[str, Any]
    constraints: list[BoundConstraint] = Field(max_length=MAX_CONSTRAINTS)
    evaluator: Literal["offline", "llm"] = "offline"

    @field_validator("document")
    @classmethod
    def _bounded_strings(cls, document: dict[str, Any]) -> dict[str, Any]:
        _check_strings(document, [0])
        return document

    def asked(self) -> dict[str, Any]:
        """What the report depends on (``request_digest``): the document and its constraints, texts included (the
        spec's report holds neither, so a report alone cannot say which document it judged)."""
        return self.model_dump(mode="json", include={"document", "constraints"})


class ComplianceReportRecord(Envelope, Sealed, BoundToRequest):
    """Key: ``request_id``. ``report`` has passed the qa_semantic_compliance_output.v1 validator."""

    policy_version: Name | None = None
    report: dict[str, Any] = Field(description=(
        "A qa_semantic_compliance_output.v1 report, validated against the request's constraints before emission; "
        "its JSON Schema ships as citestream/compliance/qa_semantic_compliance_output.v1.json"))
    evaluator: Literal["offline", "llm"]
