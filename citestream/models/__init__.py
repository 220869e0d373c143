"""Pydantic v2 records: the only shapes that cross a topic. One module per contract."""

from .answer import AnswerSentence, ValidatedAnswer
from .assembly import AnswerBundle, PromptBuildResult, PromptRecord, RetrievalResult, SelectedEvidence
from ..core.texts import REFUSAL_TEXT
from .common import SCHEMA_VERSION, Contract, Envelope, NoAnswer, QuestionReading, StageTiming, request_digest
from .compliance import BoundConstraint, ComplianceReportRecord, ComplianceRequest
from .filtering import RelevantFactsRecord
from .generation import GenerationRecord, LLMExecutionResult
from .ingest import IngestRequest, IngestResult, InlineDocument
from .ops import FALLBACK_ALERT_MESSAGE, DeadLetter, FallbackRateAlert, FallbackTick
from .question import QuestionEvent
from .retrieval import Fact, FactsRecord, GroundingPack, RelevanceTrace, RetrievalTrace
from .verdicts import ClaimVerdict, ClaimVerifyRequest, ClaimVerifyResult

__all__ = [
    "AnswerBundle", "AnswerSentence", "BoundConstraint", "ClaimVerdict", "ClaimVerifyRequest",
    "ClaimVerifyResult", "ComplianceReportRecord", "ComplianceRequest", "Contract", "DeadLetter",
    "Envelope", "FALLBACK_ALERT_MESSAGE", "Fact", "FactsRecord", "FallbackRateAlert", "FallbackTick",
    "GenerationRecord", "GroundingPack", "IngestRequest", "IngestResult", "InlineDocument", "LLMExecutionResult",
    "NoAnswer", "PromptBuildResult", "PromptRecord", "QuestionEvent", "QuestionReading", "REFUSAL_TEXT",
    "RelevantFactsRecord", "RelevanceTrace", "RetrievalResult", "RetrievalTrace", "SCHEMA_VERSION",
    "SelectedEvidence", "StageTiming", "ValidatedAnswer", "request_digest",
]
