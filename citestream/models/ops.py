"""`qa.deadletter` and `ops.alerts`: what operators read."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .common import Envelope, Name, Sealed, StampedEnvelope, utcnow

ReasonCode = Literal[
    "DECODE_ERROR",          # not UTF-8 or not JSON
    "NESTING_TOO_DEEP",      # JSON nested deeper than the contracts allow (limits.MAX_JSON_DEPTH)
    "RECORD_TOO_LARGE",      # more bytes than the source topic accepts (TopicSpec.max_bytes)
    "SCHEMA_VIOLATION",      # JSON that breaks the topic's record contract
    "DUPLICATE_REQUEST_ID",  # a request_id already used by a different question
    "PROVENANCE_MISMATCH",   # an internal record the pipeline did not produce (forged or replayed with changes)
    "STAGE_ERROR",           # the stage raised on a valid record
    "OUTPUT_CONTRACT",       # the stage produced a record that breaks the next topic's contract
    "OUTPUT_TOO_LARGE",      # the stage produced a record larger than the broker accepts
    "LLM_REPLY_INVALID",     # an LLM reply that broke its JSON contract (the question continues on a fallback)
    "REPORT_INVALID",        # a compliance report that broke qa_semantic_compliance_output.v1
]

MAX_REASON_CHARS = 2000
KEPT_ORIGINAL_BYTES = 64 * 1024
"""Bytes of the original value a dead letter keeps; longer originals are cut and described by length and hash."""
KEPT_KEY_BYTES = 1024


class DeadLetter(Envelope, Sealed):
    """Key: ``request_id`` (the original key, or ``unknown-<topic>-<partition>-<offset>`` when there was none).

    It always fits on the broker: an original longer than ``KEPT_ORIGINAL_BYTES``
    is kept as its first bytes plus ``original_length`` and ``original_sha256``.
    """

    policy_version: Name | None = None
    stage: Name
    source_topic: Name
    reason_code: ReasonCode
    reason: str = Field(max_length=MAX_REASON_CHARS)
    original_key_b64: str | None = Field(None, max_length=2 * KEPT_KEY_BYTES)
    original_value_b64: str = Field(
        description="The original record bytes (or their first KEPT_ORIGINAL_BYTES), base64",
        max_length=2 * KEPT_ORIGINAL_BYTES)
    original_length: int | None = Field(None, ge=0, description="Bytes of the original value")
    original_sha256: str | None = Field(None, max_length=64, description="SHA-256 of the whole original value")
    original_truncated: bool = Field(False, description="original_value_b64 holds only the first bytes")
    partition: int | None = None
    offset: int | None = None
    failed_at: datetime = Field(default_factory=utcnow)


FALLBACK_ALERT_MESSAGE = (
    "Fallback retrieval triggered too often; check embeddings/index changes or similarity calibration."
)


class FallbackRateAlert(StampedEnvelope, Sealed):
    """Key: ``request_id`` = ``fallback-rate-<window_start>``."""

    kind: Literal["fallback_rate"] = "fallback_rate"
    message: str = FALLBACK_ALERT_MESSAGE
    window_start: datetime
    window_end: datetime
    answerable_count: int = Field(ge=0)
    fallback_count: int = Field(ge=0)
    rate: float = Field(ge=0.0, le=1.0)
    threshold: float
