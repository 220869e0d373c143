"""Saving an uploaded PDF where the ingest agent can read it, under a name the server chooses.

The file goes to ``$CITESTREAM_STATE_DIR/uploads/<first 16 hex of its SHA-256>/<cleaned name>.pdf``:
the folder is the content's, so two uploads never overwrite each other, and
the cleaned name keeps ingest's identity rule within the uploads' own namespace
(the document is ``upload:<name>``, so uploading a new version of a file
replaces the earlier upload, never a document from another folder).
The upload is streamed to disk in the chunks the client sends, and refused as
soon as it passes the byte cap (its declared length is checked before any byte
is read), when it passes the client's bytes of the day (``spend``, a 429) or the
room left for uploads on disk (``room``, shared with every upload in flight, a 507); it must start like a PDF. A
refused upload leaves nothing on disk, and
``discard`` takes back one whose ingest request could not be sent (the worker
deletes an upload that fails to ingest).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
import os
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from .throttle import Bucket
from .upload_room import UploadRoom

PDF_MAGIC = b"%PDF-"
MAX_NAME_CHARS = 80
MAX_FILENAME_CHARS = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class UploadRejected(ValueError):
    """Not saved; the message is shown to the person who uploaded."""

    status = 400


class UploadTooLarge(UploadRejected):
    status = 413


class UploadOverBudget(UploadRejected):
    """The client uploaded its bytes of the day."""

    status = 429

    def __init__(self, message: str, retry_after_s: float):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class UploadsFull(UploadRejected):
    """Uploads on disk take the room the operator gave them."""

    status = 507


@dataclass(frozen=True)
class SavedUpload:
    path: Path
    new: bool  # False: the same bytes were uploaded under the same name before, and that file is kept


def _too_large(max_bytes: int) -> UploadTooLarge:
    return UploadTooLarge(f"the file is larger than the {max_bytes / (1 << 20):g} MB limit")


def safe_stem(filename: str) -> str:
    """Letters, digits, '-' and '_' of the name's last component without its extension; never empty."""
    base = re.split(r"[\\/]", (filename or "")[:MAX_FILENAME_CHARS])[-1]  # a header: cut before it is read
    stem = base[:-4] if base.lower().endswith(".pdf") else base
    cleaned = _UNSAFE.sub("-", stem).strip("-_")[:MAX_NAME_CHARS].strip("-_")
    return cleaned or "upload"


def uploads_bytes(uploads_dir: Path) -> int:
    """Bytes the uploads on disk take (the worker removes expired and failed ones)."""
    total = 0
    for path in uploads_dir.glob("*/*"):
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            continue
    return total


def _over_budget(wait_s: float) -> UploadOverBudget:
    return UploadOverBudget(f"this address uploaded its megabytes of the day; retry in {max(1, round(wait_s))} s",
                            wait_s)


async def save_upload(chunks: AsyncIterator[bytes], filename: str, uploads_dir: Path, max_bytes: int,
                      declared_length: str | None = None, spend: Bucket | None = None,
                      room: UploadRoom | None = None) -> SavedUpload:
    """Stream ``chunks`` to a temporary file, check size and magic, move it to its content-addressed place.

    ``declared_length`` (the Content-Length header) over the cap, over what ``spend`` (the client's bytes of the
    day) has left or over ``room`` (bytes left for uploads) is refused before anything is read; each chunk read
    is taken from ``spend`` and reserved in ``room`` before it is written, so uploads in flight together never
    pass the room."""
    declared = int(declared_length) if declared_length and declared_length.isdigit() else None
    if declared is not None and declared > max_bytes:
        raise _too_large(max_bytes)
    if room is not None and (declared or 0) > room.left():
        raise UploadsFull("uploads take all the room the server gives them; ask its operator")
    if spend is not None and declared is not None and spend.left() < declared:
        raise _over_budget((declared - spend.left()) / spend.per_second)
    uploads_dir.mkdir(parents=True, exist_ok=True)
    tmp = uploads_dir / f".incoming-{uuid.uuid4().hex}"
    digest = hashlib.sha256()
    size = reserved = 0
    head = b""
    landed = False
    try:
        with open(tmp, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(max_bytes)
                if room is not None:
                    if not room.take(len(chunk)):
                        raise UploadsFull("uploads take all the room the server gives them; ask its operator")
                    reserved += len(chunk)
                if spend is not None and (wait := spend.take(len(chunk))):
                    raise _over_budget(wait)
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
        new = not final.exists()
        os.replace(tmp, final)
        landed = new  # the same bytes under the same name replace a file of their size
        return SavedUpload(final, new)
    finally:
        tmp.unlink(missing_ok=True)
        if room is not None:
            room.done(reserved, landed)


def discard(saved: SavedUpload) -> None:
    """Remove an upload nothing will ingest (and its folder once empty); one saved before is left to its document."""
    if saved.new:
        saved.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: the same bytes under another name
            saved.path.parent.rmdir()


def keep_owner(owners_dir: Path, doc_id: str) -> str:
    """A new secret for whoever uploaded ``doc_id``: only its digest is kept, under the page's state, and the one
    who holds it may correct the document's issuer (``is_owner``). A later upload of the same name takes it over."""
    owners_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    _owner_file(owners_dir, doc_id).write_text(hashlib.sha256(token.encode()).hexdigest())
    return token


def is_owner(owners_dir: Path, doc_id: str, token: str) -> bool:
    """Whether ``token`` is the secret the upload of ``doc_id`` was given."""
    try:
        kept = _owner_file(owners_dir, doc_id).read_text().strip()
    except OSError:
        return False
    return hmac.compare_digest(kept, hashlib.sha256(token.encode()).hexdigest())


def _owner_file(owners_dir: Path, doc_id: str) -> Path:
    return owners_dir / hashlib.sha256(doc_id.encode()).hexdigest()
