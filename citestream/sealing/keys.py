"""Keys the worker keeps outside Postgres and the broker: 32 random bytes, hex, in a file only its owner reads.

Two secret keys: the ledger's checkpoints (``store/anchors.py``, HMAC) and the records' seal (``sealing``, the
Ed25519 private key; its public key, which the page and the clients read, beside it). A secret key is made the
first time a process that signs needs it; readers never make one. A key file anyone but its owner may read (or a
public key anyone but its owner may write) is refused: a key that others can read is no secret, and one they can
write is not the worker's.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path


class KeyFileOpen(ValueError):
    """The key file's permissions let others read (a secret key) or write (a public key) it."""


def check_mode(path: Path, others_may: int) -> None:
    """``KeyFileOpen`` when ``path`` grants group or others more than ``others_may`` (``stat`` bits, e.g. S_IROTH)."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    loose = mode & 0o077 & ~others_may
    if loose:
        raise KeyFileOpen(f"{path} has mode {mode:04o}: group or others may "
                          f"{'write' if loose & 0o022 else 'read'} it (chmod {mode & ~loose:o} it)")


def load_key(path: Path, create: bool = False) -> bytes | None:
    """The secret key in ``path`` (refused when others may read it); created when missing and ``create``
    (atomically: two processes get the same key)."""
    try:
        check_mode(path, 0)
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


def write_public(path: Path, data: bytes) -> None:
    """``data`` (a public key, hex) into ``path``, 0600 like everything in the state folder (a page running as
    another user is given a copy, or read access, by the operator; no one else may write it); atomically."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as out:
        out.write(data.hex() + "\n")
    os.replace(name, path)


def load_public(path: Path) -> bytes | None:
    """The public key in ``path`` (refused when others may write it), or None when there is none."""
    try:
        check_mode(path, 0o044)
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        return None
