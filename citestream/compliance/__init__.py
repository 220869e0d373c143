"""Semantic QA compliance reports (qa_semantic_compliance_output.v1): schema, validator, evaluators."""

from .evaluate import compliance_report, embedding_relatedness
from .rule_evaluator import Classification, classify, lexical_relatedness
from .report import build_report
from .validator import SCHEMA_VERSION, ReportInvalid, Violation, report_schema, report_violations, validate_report

__all__ = ["SCHEMA_VERSION", "Classification", "ReportInvalid", "Violation", "build_report", "classify",
           "compliance_report", "embedding_relatedness", "lexical_relatedness", "report_schema",
           "report_violations", "validate_report"]
