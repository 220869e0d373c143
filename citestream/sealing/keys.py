"""Secret keys the worker keeps outside Postgres and the broker: 32 random bytes, hex, in a 0600 file.

Two use it: the ledger's checkpoints (``store/anchors.py``) and the records the worker writes
(``sealing``). A key is made the first time a process that signs needs it; readers never make one.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path


def load_key(path: Path, create: bool = False) -> bytes | None:
    """The key in ``path``; created when missing and ``create`` (atomically: two processes get the same key)."""
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = secrets.token_bytes(32)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600, unique per caller
    tmp = Path(name)
    with os.fdopen(fd, "w") as out:
        out.write(key.hex() + "\n")
    try:
        os.link(tmp, path)  # fails when another process made it first; never leaves a half-written key
    except FileExistsError:
        return bytes.fromhex(path.read_text().strip())
    finally:
        tmp.unlink()
    return key
