"""Strict JSON from untrusted bytes: the decoder every reader of a topic uses (the agents' intake, the web page).

The checks are ordered cheapest first and each bounds the next: bytes, UTF-8, strict JSON (no NaN, no
repeated key), nesting depth. Every refusal is a ``RecordRejected`` with a reason code, so a reader gives each
record a fate instead of an exception.
"""

from __future__ import annotations

import json
import math
from typing import NoReturn

from .errors import RecordRejected

MAX_JSON_DEPTH = 32
"""Nesting of a record's JSON (the deepest contract needs about 8)."""


def check_size(value: bytes | None, max_bytes: int, topic: str) -> bytes:
    value = value or b""
    if len(value) > max_bytes:
        raise RecordRejected("RECORD_TOO_LARGE", f"{len(value)} bytes; {topic} takes at most {max_bytes}")
    return value


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _finite(literal: str) -> float:
    """A number JSON writes: ``1e999`` reads as infinity, which no JSON writer (nor a page's response) takes."""
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"{literal[:40]} is out of range")
    return value


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
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
        data = json.loads(text, parse_constant=_no_constants, parse_float=_finite,
                          object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        raise RecordRejected("NESTING_TOO_DEEP", "JSON nested deeper than the decoder allows") from None
    except json.JSONDecodeError as exc:
        raise RecordRejected("DECODE_ERROR", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise RecordRejected("DECODE_ERROR", f"not JSON: {exc}") from None
    if depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise RecordRejected("NESTING_TOO_DEEP", f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return data
