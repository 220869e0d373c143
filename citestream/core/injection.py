"""Text that instructs a model (an echoed prompt injection) rather than stating a fact.

One pattern for the validator (R5 drops such a sentence) and the extractive backend (never quotes one).
"""

from __future__ import annotations

import re

INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\b[^.]{0,40}\b(?:instructions?|rules|prompts?|guidelines)\b"
    r"|\byou are now\b|\bsystem prompt\b|\bdeveloper mode\b|\bjailbreak\b|NO_EVIDENCE|###|<\|?(?:im_start|system)",
    re.IGNORECASE,
)


def is_injection(text: str) -> bool:
    return bool(INJECTION.search(text))
