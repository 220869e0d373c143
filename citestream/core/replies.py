"""A model's reply as JSON: the filter (Phase B) and the validator (R5) read it the same way, with one parser and one
check of a row's evidence key."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

FENCE = "```"


class MalformedReply(ValueError):
    """The reply is not one strict JSON value (a repeated object key included)."""


def unfenced(raw: str) -> str:
    r"""``raw`` stripped, without one ```json (or ```) fence around the whole of it. Sliced, not matched: the
    pattern ```(?:json)?\s*(.*?)\s*``` read a reply's runs of spaces again at every character."""
    text = raw.strip()
    if len(text) < 2 * len(FENCE) or not (text.startswith(FENCE) and text.endswith(FENCE)):
        return text
    inner = text[len(FENCE):-len(FENCE)]
    return (inner[4:] if inner.startswith("json") else inner).strip()


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    counts = Counter(k for k, _ in pairs)
    if len(counts) != len(pairs):  # counted once: keys.count(k) for every key was quadratic in an object's keys
        duplicate = min(k for k, n in counts.items() if n > 1)
        raise MalformedReply(f"duplicate object key {duplicate!r}")
    return dict(pairs)


def parse_reply(raw: str) -> object:
    """Strict JSON (one optional ```json fence); a repeated object key is malformed, not last-one-wins, and so is
    a reply nested deeper than the decoder's stack (4,000 ``{"a":`` in a reply of 20,000 characters raised
    ``RecursionError`` from the decoder)."""
    try:
        return json.loads(unfenced(raw), object_pairs_hook=_no_duplicate_keys)
    except MalformedReply:
        raise
    except ValueError as exc:
        raise MalformedReply(str(exc)[:120]) from None
    except RecursionError:
        raise MalformedReply("nested deeper than the decoder reads") from None


def row_key(row: object) -> tuple[str, int, str] | None:
    """A reply row's evidence key ``(pdf, page, chunk_id)``: non-empty texts and an integer page (not a bool) ≥ 1;
    None when the row is not an object or its key breaks one of those."""
    if not isinstance(row, dict):
        return None
    pdf, page, chunk_id = row.get("pdf"), row.get("page"), row.get("chunk_id")
    if not isinstance(pdf, str) or not pdf.strip():
        return None
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        return None
    if not isinstance(chunk_id, str) or not chunk_id.strip():
        return None
    return (pdf, page, chunk_id)
