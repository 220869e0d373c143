"""Text from outside (exceptions, provider error bodies) made fit for a record that others read.

Dead letters, ``failure_reason`` and ``LLMExecutionResult.error`` travel on
topics any consumer may read. What goes into them is cut short, stripped of
control characters, and scrubbed of what looks like a credential; database
errors keep their class and first line, never the SQL or its parameters (which
carry question text).
"""

from __future__ import annotations

import logging
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


_LOG_UNSAFE = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7f, 0xa0)]}
_LOG_UNSAFE.update({c: f"\\u{c:04x}" for c in [*range(0x202a, 0x202f), *range(0x2066, 0x206a), 0x2028, 0x2029,
                                               0x200e, 0x200f, 0x061c]})


def for_log(text: str) -> str:
    """``text`` as one log line: control characters, line and paragraph separators and the direction marks and
    overrides written as escapes (``\\x0a``, ``\\u202e``), so a record's text cannot start a forged line nor
    reorder the one it is in."""
    return text.translate(_LOG_UNSAFE)


class _OneLineRecord(logging.LogRecord):
    def getMessage(self) -> str:  # noqa: N802 - logging's own name
        return for_log(super().getMessage())


def log_one_line_per_record() -> None:
    """Every process's log records, whoever made the logger, read their message through ``for_log`` (tracebacks,
    which a handler adds after the message, keep their lines)."""
    logging.setLogRecordFactory(_OneLineRecord)


def exception_reason(exc: BaseException, limit: int = 300) -> str:
    """``Class: first line`` of an exception, scrubbed; database errors without their SQL or parameters."""
    inner = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    message = _SQL_DETAIL.sub("", scanned(str(inner))).strip().splitlines()
    first = message[0] if message else ""
    name = type(exc).__name__ if inner is exc else f"{type(exc).__name__}({type(inner).__name__})"
    return scrub(f"{name}: {first}" if first else name, limit)
