"""The compliance stage: a document and its bound constraints → a validated report, or ReportInvalid."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..llm import LLMBackend
from ..models.common import request_digest
from ..models.compliance import ComplianceReportRecord, ComplianceRequest
from .llm_evaluator import llm_report
from .rule_evaluator import Relatedness, classify, lexical_relatedness
from .report import build_report
from .validator import ReportInvalid, Violation, validate_report

OFFLINE_MODEL = "offline-evaluator-v1"


def compliance_report(request: ComplianceRequest, policy_version: str,
                      llm: Callable[[], LLMBackend] | None = None,
                      relatedness: Relatedness = lexical_relatedness) -> ComplianceReportRecord:
    """Every report is validated against the request's constraints before it leaves; ReportInvalid otherwise. The
    record carries ``request_digest``: the report names neither the document nor the constraint texts (N-M2)."""
    policy_version = request.policy_version or policy_version
    if request.evaluator == "llm":
        if llm is None:
            raise ReportInvalid([Violation("schema", "evaluator 'llm' requested but no LLM backend is configured")])
        try:
            report = llm_report(request.request_id, request.document, request.constraints, llm(), policy_version)
        except ValueError as exc:  # not JSON, or not an object (LLM outages propagate: STAGE_ERROR)
            raise ReportInvalid([Violation("schema", f"the LLM reply is not a JSON report: {exc}")]) from exc
    else:
        started = time.monotonic()
        classifications = classify(request.document, request.constraints, relatedness)
        report = build_report(request.request_id, classifications, model=OFFLINE_MODEL,
                              policy_version=policy_version, latency_ms=(time.monotonic() - started) * 1000)
    validate_report(report, request.constraints)
    return ComplianceReportRecord(**request.carry(policy_version=policy_version), report=report,
                                  evaluator=request.evaluator, request_digest=request_digest(request))


def embedding_relatedness(embedder) -> Relatedness:
    """Cosine of all-MiniLM embeddings, clipped to [0, 1]: links 'schools?' to a family deployment decision."""

    def related(texts, constraint_texts) -> list[list[float]]:
        vectors = embedder.embed([*texts, *constraint_texts])  # one pass: each constraint embedded once
        questions, bound = vectors[:len(texts)], vectors[len(texts):]
        return [[max(0.0, float(q @ v)) for v in bound] for q in questions]

    return related
