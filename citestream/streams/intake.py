"""What a raw Kafka record passes before a stage sees it, and the dead letter it gets when it does not.

Every refusal is a ``RecordRejected`` with a reason code, so every record ends
somewhere: on the next topic, or on ``qa.deadletter``. The checks are ordered
cheapest first and each one bounds the next: bytes (``TopicSpec.max_bytes``),
UTF-8, strict JSON (no NaN, no duplicate keys), nesting depth (``core.strict_json``,
which the web page reads topics with too), then the topic's record contract.
"""

from __future__ import annotations

import base64
import hashlib
import re

from pydantic import BaseModel, ValidationError

from ..core.errors import RecordRejected
from ..core.strict_json import check_size, decode_json
from ..models import DeadLetter
from ..models.ops import KEPT_KEY_BYTES, KEPT_ORIGINAL_BYTES, MAX_REASON_CHARS
from ..core.scrub import scrub


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def usable_id(value: object) -> str | None:
    """``value`` when it is a valid request_id (a hostile key or id must not break the dead letter itself)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) and _REQUEST_ID.match(value) else None


def contract_errors(exc: ValidationError) -> str:
    """Where and why a record broke its contract: field paths and messages, never the offending values."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:5]:
        where = ".".join(scrub(str(p), 40) for p in error["loc"][:6])
        parts.append(f"{where}: {error['msg']}")
    return scrub("; ".join(parts), 1000)


def parse(model: type[BaseModel], data: object) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RecordRejected("SCHEMA_VIOLATION", contract_errors(exc)) from None
    except RecursionError:
        raise RecordRejected("NESTING_TOO_DEEP", "record nested deeper than the contract allows") from None


def dead_letter_record(*, stage: str, source: str, key: bytes | None, value: bytes | None, code: str, reason: str,
                       partition: int | None, offset: int | None, request_id: str | None,
                       policy_version: str | None) -> DeadLetter:
    """The dead letter for one record; it keeps the original, or its first bytes with length and SHA-256."""
    value = value or b""
    kept = value[:KEPT_ORIGINAL_BYTES]
    return DeadLetter(
        request_id=usable_id(request_id) or usable_id(key) or f"unknown-{source}-{partition}-{offset}",
        policy_version=policy_version, stage=stage, source_topic=source, reason_code=code,
        reason=scrub(reason, MAX_REASON_CHARS), partition=partition, offset=offset,
        original_key_b64=base64.b64encode(key[:KEPT_KEY_BYTES]).decode() if key else None,
        original_value_b64=base64.b64encode(kept).decode(), original_length=len(value),
        original_sha256=hashlib.sha256(value).hexdigest(), original_truncated=len(kept) < len(value),
    )


__all__ = ["RecordRejected", "check_size", "contract_errors", "dead_letter_record", "decode_json", "parse",
           "usable_id"]
