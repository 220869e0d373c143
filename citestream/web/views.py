"""What the browser receives for each record: plain JSON, bounded in size, never markup.

The page puts every string it gets into the DOM with ``textContent``; these
views only decide *which* fields travel and how long they may be. Bytes that
came off a topic (a dead letter's original record) are decoded here into a
printable, escaped, truncated preview, so the browser never sees raw bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..models import DeadLetter, FallbackRateAlert, IngestResult, ValidatedAnswer

EventKind = Literal["answer", "alert", "deadletter", "ingested", "stage"]

PREVIEW_CHARS = 400
REASON_CHARS = 600
RAW_JSON_CHARS = 20_000
IDS_SHOWN = 10


class WebEvent(BaseModel):
    """One record as the page shows it; ``data`` is the kind's view below."""

    kind: EventKind
    topic: str
    request_id: str | None = None
    partition: int
    offset: int
    timestamp_ms: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def printable(data: bytes, limit: int = PREVIEW_CHARS) -> str:
    """UTF-8 where it decodes; every other byte and every control character as a visible escape."""
    text = data.decode("utf-8", errors="backslashreplace")
    out = []
    for ch in text:
        if ch in "\n\t" or (ch.isprintable() and ch not in "\u2028\u2029"):
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return truncate("".join(out), limit)


def answer_view(answer: ValidatedAnswer) -> dict[str, Any]:
    return answer.model_dump(mode="json")


def alert_view(alert: FallbackRateAlert) -> dict[str, Any]:
    return alert.model_dump(mode="json")


def deadletter_view(letter: DeadLetter) -> dict[str, Any]:
    """The original bytes as a safe preview; the reason truncated (it may quote the hostile input)."""
    try:
        original = base64.b64decode(letter.original_value_b64, validate=True)
    except (binascii.Error, ValueError):
        original = letter.original_value_b64.encode()
    key = None
    if letter.original_key_b64:
        try:
            key = printable(base64.b64decode(letter.original_key_b64, validate=True), 128)
        except (binascii.Error, ValueError):
            key = printable(letter.original_key_b64.encode(), 128)
    return {
        "request_id": letter.request_id, "stage": letter.stage, "source_topic": letter.source_topic,
        "reason_code": letter.reason_code, "reason": printable(letter.reason.encode(), REASON_CHARS),
        "original_key": key, "original_preview": printable(original), "original_bytes": len(original),
        "partition": letter.partition, "offset": letter.offset, "failed_at": letter.failed_at.isoformat(),
    }


def ingested_view(result: IngestResult) -> dict[str, Any]:
    """The envelope with its chunk id list cut short (a whole corpus is thousands of ids)."""
    data = result.model_dump(mode="json")
    ids = data["outputs"]["chunkIds"]
    data["outputs"]["chunkIds"] = ids[:IDS_SHOWN]
    data["outputs"]["chunkIdsOmitted"] = max(0, len(ids) - IDS_SHOWN)
    return data


def record_summary(record: dict[str, Any]) -> dict[str, Any]:
    """Top-level fields of any stage record, scalars as they are (strings cut), containers by size.

    Generic on purpose: the timeline shows every stage's record without a view
    per model, so a new field in a stage's record shows up without a change here.
    """
    skip = {"request_id", "schema_version", "policy_version", "index_version", "trace"}
    out: dict[str, Any] = {}
    for name, value in record.items():
        if name in skip:
            continue
        if isinstance(value, str):
            out[name] = truncate(value, 300)
        elif isinstance(value, (int, float, bool)) or value is None:
            out[name] = value
        elif isinstance(value, list):
            out[name] = f"{len(value)} item{'s' if len(value) != 1 else ''}"
        elif isinstance(value, dict):
            out[name] = f"{len(value)} field{'s' if len(value) != 1 else ''}"
    return out


def raw_json(record: Any) -> str:
    return truncate(json.dumps(record, indent=2, ensure_ascii=False, default=str), RAW_JSON_CHARS)
