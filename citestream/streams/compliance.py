"""compliance.requests → compliance (offline or LLM evaluator, validated) → compliance.reports, else REPORT_INVALID"""

from ..compliance import ReportInvalid, compliance_report, embedding_relatedness
from ..models import ComplianceReportRecord, ComplianceRequest
from .app import RecordRejected, stage_agent
from .deps import Deps


@stage_agent("compliance", source="compliance.requests", sink="compliance.reports")
def compliance(request: ComplianceRequest, deps: Deps) -> ComplianceReportRecord:
    try:
        return compliance_report(request, deps.policy.version, lambda: deps.llm, embedding_relatedness(deps.embedder))
    except ReportInvalid as exc:
        raise RecordRejected("REPORT_INVALID", str(exc)) from exc
