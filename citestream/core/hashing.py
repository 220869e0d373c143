"""SHA-256 of text: the hex digest of its UTF-8 bytes (prompts, replies, ledger material, question keys)."""

from __future__ import annotations

import hashlib


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
