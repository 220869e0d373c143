"""A model's reply as JSON text: the filter and the validator read it the same way."""

from __future__ import annotations

import re

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def unfenced(raw: str) -> str:
    """``raw`` stripped, without one ```json (or ```) fence around the whole of it."""
    text = raw.strip()
    fence = _FENCE.fullmatch(text)
    return fence.group(1) if fence else text
