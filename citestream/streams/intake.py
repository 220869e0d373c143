"""What a raw Kafka record passes before a stage sees it, and the dead letter it gets when it does not.

Every refusal is a ``RecordRejected`` with a reason code, so every record ends
somewhere: on the next topic, or on ``qa.deadletter``. The checks are ordered
cheapest first and each one bounds the next: bytes (``TopicSpec.max_bytes``),
UTF-8, strict JSON (no NaN, no duplicate keys), nesting depth, then the topic's
record contract.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

from pydantic import BaseModel, ValidationError

from ..core.errors import RecordRejected
from ..models import DeadLetter
from ..models.limits import MAX_JSON_DEPTH
from ..models.ops import KEPT_KEY_BYTES, KEPT_ORIGINAL_BYTES, MAX_REASON_CHARS
from ..scrub import scrub


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


def usable_id(value: object) -> str | None:
    """``value`` when it is a valid request_id (a hostile key or id must not break the dead letter itself)."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) and _REQUEST_ID.match(value) else None


def check_size(value: bytes | None, max_bytes: int, topic: str) -> bytes:
    value = value or b""
    if len(value) > max_bytes:
        raise RecordRejected("RECORD_TOO_LARGE", f"{len(value)} bytes; {topic} takes at most {max_bytes}")
    return value


def _no_constants(name: str):
    raise ValueError(f"{name} is not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("an object repeats a key")
    return obj


def depth(data: object, limit: int) -> int:
    """Nesting depth of decoded JSON, counted without recursion; stops counting past ``limit``."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def decode_json(value: bytes) -> object:
    """Strict JSON from UTF-8 bytes, no deeper than ``MAX_JSON_DEPTH``; else ``RecordRejected``."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordRejected("DECODE_ERROR", f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    try:
        data = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        raise RecordRejected("NESTING_TOO_DEEP", "JSON nested deeper than the decoder allows") from None
    except json.JSONDecodeError as exc:
        raise RecordRejected("DECODE_ERROR", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise RecordRejected("DECODE_ERROR", f"not JSON: {exc}") from None
    if depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise RecordRejected("NESTING_TOO_DEEP", f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return data


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
