"""`qa.deadletter` and `ops.alerts`: what operators read."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import datetime
from typing import Literal

from pydantic import Field

from ..core.scrub import scrub
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


class FallbackTick(StampedEnvelope, Sealed):
    """One answerable ``qa.facts`` record, as the fallback-rate table counts it: what the alerts agent regroups
    under one key instead of the whole record (under 300 bytes against tens of kilobytes), sealed so that a tick no
    worker wrote is not counted. Key: ``fallback-rate``."""

    fallback_used: bool


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


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def usable_id(value: object) -> str | None:
    """``value`` when it is a valid request_id (a hostile key or id must not break the dead letter itself)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) and _REQUEST_ID.match(value) else None


def dead_letter_record(*, stage: str, source: str, key: bytes | None, value: bytes | None, code: str, reason: str,
                       partition: int | None, offset: int | None, request_id: str | None,
                       policy_version: str | None, index_version: str | None = None) -> DeadLetter:
    """The dead letter for one record, or for what a stage refused beside its output: the reason scrubbed and cut,
    the original kept whole or as its first bytes with its length and SHA-256, so the letter always fits."""
    value = value or b""
    kept = value[:KEPT_ORIGINAL_BYTES]
    return DeadLetter(
        request_id=usable_id(request_id) or usable_id(key) or f"unknown-{source}-{partition}-{offset}",
        policy_version=policy_version, index_version=index_version, stage=stage, source_topic=source, reason_code=code,
        reason=scrub(reason, MAX_REASON_CHARS), partition=partition, offset=offset,
        original_key_b64=base64.b64encode(key[:KEPT_KEY_BYTES]).decode() if key else None,
        original_value_b64=base64.b64encode(kept).decode(), original_length=len(value),
        original_sha256=hashlib.sha256(value).hexdigest(), original_truncated=len(kept) < len(value),
    )
