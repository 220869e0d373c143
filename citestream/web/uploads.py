"""Saving an uploaded PDF where the ingest agent can read it, under a name the server chooses.

The file goes to ``$CITESTREAM_STATE_DIR/uploads/<first 16 hex of its SHA-256>/<cleaned name>.pdf``:
the folder is the content's, so two uploads never overwrite each other, and
the cleaned name keeps ingest's identity rule (a document is its file name, so
uploading a new version of a file replaces the old one, as with the CLI).
The upload is streamed to disk with a byte cap and must start like a PDF.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

PDF_MAGIC = b"%PDF-"
MAX_NAME_CHARS = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class UploadRejected(ValueError):
    """Not saved; the message is shown to the person who uploaded."""


def safe_stem(filename: str) -> str:
    """Letters, digits, '-' and '_' of the name's last component without its extension; never empty."""
    base = re.split(r"[\\/]", filename or "")[-1]
    stem = base[:-4] if base.lower().endswith(".pdf") else base
    cleaned = _UNSAFE.sub("-", stem).strip("-_")[:MAX_NAME_CHARS].strip("-_")
    return cleaned or "upload"


async def save_upload(chunks: AsyncIterator[bytes], filename: str, uploads_dir: Path, max_bytes: int) -> Path:
    """Stream ``chunks`` to a temporary file, check size and magic, move it to its content-addressed place."""
    uploads_dir.mkdir(parents=True, exist_ok=True)
    tmp = uploads_dir / f".incoming-{uuid.uuid4().hex}"
    digest = hashlib.sha256()
    size = 0
    head = b""
    try:
        with open(tmp, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise UploadRejected(f"the file is larger than the {max_bytes // (1 << 20)} MB limit")
                if len(head) < len(PDF_MAGIC):
                    head = (head + chunk)[: len(PDF_MAGIC)]
                digest.update(chunk)
                out.write(chunk)
        if size == 0:
            raise UploadRejected("the file is empty")
        if head != PDF_MAGIC:
            raise UploadRejected("the file is not a PDF (it does not start with %PDF-)")
        folder = uploads_dir / digest.hexdigest()[:16]
        folder.mkdir(exist_ok=True)
        final = folder / f"{safe_stem(filename)}.pdf"
        if final.resolve().parent != folder.resolve():  # cannot happen with safe_stem; kept as the last guard
            raise UploadRejected("unusable file name")
        os.replace(tmp, final)
        return final
    finally:
        tmp.unlink(missing_ok=True)
