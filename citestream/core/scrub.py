"""Text from outside (exceptions, provider error bodies) made fit for a record that others read.

Dead letters, ``failure_reason`` and ``LLMExecutionResult.error`` travel on
topics any consumer may read. What goes into them is cut short, stripped of
control characters, and scrubbed of what looks like a credential; database
errors keep their class and first line, never the SQL or its parameters (which
carry question text).
"""

from __future__ import annotations

import re

from .bounds import scanned

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SECRETS = [
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 [REDACTED]"),
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_-]{8,}"), "[REDACTED]"),
    (re.compile(r"(?i)\b(api[_-]?key|apikey|token|secret|password|passwd|pwd|authorization)(\"?\s*[:=]\s*\"?)"
                r"[^\s\"',;&]{1,}"), r"\1\2[REDACTED]"),
    (re.compile(r"(?i)(postgres(?:ql)?(?:\+\w+)?://[^:/@\s]{1,256}:)[^@\s]{1,256}@"), r"\1[REDACTED]@"),
]
_SQL_DETAIL = re.compile(r"(?:(?<!\s)\s+)?(?:\[SQL:|\[parameters:|\(Background on this error|DETAIL:|CONTEXT:"
                         r"|LINE \d+:).*", re.DOTALL)


def scrub(text: str, limit: int = 300) -> str:
    """``text`` without control characters or credential-like tokens, at most ``limit`` characters. Cut before it
    is read (4 × ``limit``: a token that starts within ``limit`` is still seen whole enough to be redacted)."""
    text = _CONTROL.sub(" ", scanned(str(text), 4 * limit + 64))
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def exception_reason(exc: BaseException, limit: int = 300) -> str:
    """``Class: first line`` of an exception, scrubbed; database errors without their SQL or parameters."""
    inner = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    message = _SQL_DETAIL.sub("", scanned(str(inner))).strip().splitlines()
    first = message[0] if message else ""
    name = type(exc).__name__ if inner is exc else f"{type(exc).__name__}({type(inner).__name__})"
    return scrub(f"{name}: {first}" if first else name, limit)
