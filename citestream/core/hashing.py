"""SHA-256 of text: the hex digest of its UTF-8 bytes (prompts, replies, ledger material, question keys); and of a
file (model weights)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
