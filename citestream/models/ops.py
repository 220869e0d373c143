"""`qa.deadletter` and `ops.alerts`: what operators read."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .common import Envelope, utcnow

ReasonCode = Literal[
    "DECODE_ERROR",        # not UTF-8 or not JSON
    "SCHEMA_VIOLATION",    # JSON that breaks the topic's record contract
    "STAGE_ERROR",         # the stage raised on a valid record
    "OUTPUT_CONTRACT",     # the stage produced a record that breaks the next topic's contract
    "LLM_REPLY_INVALID",   # an LLM reply that broke its JSON contract (the question continues on a fallback)
    "REPORT_INVALID",      # a compliance report that broke qa_semantic_compliance_output.v1
]


class DeadLetter(Envelope):
    """Key: ``request_id`` (the original key, or ``unknown-<topic>-<partition>-<offset>`` when there was none)."""

    policy_version: str | None = None
    stage: str
    source_topic: str
    reason_code: ReasonCode
    reason: str
    original_key_b64: str | None = None
    original_value_b64: str = Field(description="The original record bytes, base64")
    partition: int | None = None
    offset: int | None = None
    failed_at: datetime = Field(default_factory=utcnow)


FALLBACK_ALERT_MESSAGE = (
    "Fallback retrieval triggered too often; check embeddings/index changes or similarity calibration."
)


class FallbackRateAlert(Envelope):
    """Key: ``request_id`` = ``fallback-rate-<window_start>``."""

    kind: Literal["fallback_rate"] = "fallback_rate"
    message: str = FALLBACK_ALERT_MESSAGE
    window_start: datetime
    window_end: datetime
    answerable_count: int = Field(ge=0)
    fallback_count: int = Field(ge=0)
    rate: float = Field(ge=0.0, le=1.0)
    threshold: float
