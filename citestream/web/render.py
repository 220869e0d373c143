"""A cited page as a PNG, and where the cited chunk's text sits on it (pypdfium2, in a limited child process).

Only ingested documents are opened, by the path ingest stored for them
(``documents.source``) and only when the file there still has the SHA-256 that
was ingested, so the page shown is the page that was indexed. The browser
names a document and a page number, never a path. pdfium runs in a child
process under memory, CPU and wall-time limits (``citestream.sandbox``), and a
page renders at ``RENDER_SCALE`` or smaller: its longer side never exceeds
``CITESTREAM_PDF_RENDER_MAX_PX``. PNGs are cached under the state folder by
content hash and page, rendered once: the check, the render and the write
happen under the page's own lock, and the file appears whole (written aside,
then renamed). The cache is bounded in bytes (``CITESTREAM_UI_PAGE_CACHE_MB``):
after a render, the least recently shown images go first. Highlight boxes are
kept in memory for the ``boxes_kept`` chunks shown last.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..config import PROJECT_ROOT, get_settings
from ..sandbox.budget import PdfRejected
from ..sandbox.pool import pdf_pool
from .queries import DocumentInfo

RENDER_SCALE = 2.0  # 144 dpi: sharp on a laptop, about 150-400 kB a page
MIN_MATCH_CHARS = 10
CHUNK = 1 << 16  # a PDF download is read and sent this much at a time
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_locks: dict[Path, tuple[threading.Lock, int]] = {}  # per page wanted now, with its waiters: one render a page
_locks_guard = threading.Lock()


class PageUnavailable(Exception):
    """The page cannot be shown; the message says why in words a reader can act on."""


@dataclass(frozen=True)
class Box:
    """A highlighted area as fractions of the page (origin top-left), so it scales with the image."""

    left: float
    top: float
    width: float
    height: float


def _source_path(doc: DocumentInfo) -> Path:
    if doc.origin == "inline" or not doc.source:
        raise PageUnavailable("this document was ingested as text, not from a PDF file")
    path = Path(doc.source)
    return path if path.is_absolute() else PROJECT_ROOT / path  # older ingests stored the path as given


def _open_file(doc: DocumentInfo) -> tuple[BinaryIO, int]:
    """The file ``doc`` was ingested from, opened once (every later check and read is of that one file, whatever
    the path names meanwhile), with its size; a regular ``.pdf`` within what ingestion reads, else
    ``PageUnavailable``."""
    path = _source_path(doc)
    if path.suffix.lower() != ".pdf":
        raise PageUnavailable("the PDF is no longer where it was ingested from")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put there does not hang the page
    except OSError:
        raise PageUnavailable("the PDF is no longer where it was ingested from") from None
    file = os.fdopen(fd, "rb")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        file.close()
        raise PageUnavailable("the PDF is no longer where it was ingested from")
    if info.st_size > get_settings().ingest_max_pdf_mb * (1 << 20):
        file.close()
        raise PageUnavailable("the PDF is larger than ingestion reads (CITESTREAM_INGEST_MAX_PDF_MB)")
    return file, info.st_size


_CHANGED = "the PDF changed since it was ingested; ingest it again to see its pages"


def source_bytes(doc: DocumentInfo) -> bytes:
    """The bytes of the file ``doc`` was ingested from, checked to still be the ingested ones."""
    file, size = _open_file(doc)
    with file:
        data = file.read(size + 1)
    if len(data) != size or hashlib.sha256(data).hexdigest() != doc.content_sha256:
        raise PageUnavailable(_CHANGED)
    return data


class SourceFile:
    """An ingested PDF to send in chunks (``/api/pdfs``), never held whole: one opened file, checked to hold the
    ingested bytes before the first chunk and hashed again as it is sent, its last chunk held back until that hash
    holds, so a file changed in between is cut short, never sent whole (issue 54: each download read up to 64 MB
    into memory)."""

    def __init__(self, file: BinaryIO, size: int, sha256: str):
        self.file, self.size, self.sha256 = file, size, sha256

    def _pieces(self) -> Iterator[bytes]:
        left = self.size
        while left > 0 and (piece := self.file.read(min(CHUNK, left))):
            left -= len(piece)
            yield piece

    def matches(self) -> bool:
        """Whether the file, read through from its start, holds the ingested bytes (then back at its start)."""
        digest, read = hashlib.sha256(), 0
        for piece in self._pieces():
            digest.update(piece)
            read += len(piece)
        self.file.seek(0)
        return read == self.size and digest.hexdigest() == self.sha256

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes, each chunk sent once the next is read; the last only once the whole hash holds."""
        digest, read, held = hashlib.sha256(), 0, b""
        for piece in self._pieces():
            digest.update(piece)
            read += len(piece)
            if held:
                yield held
            held = piece
        if read != self.size or digest.hexdigest() != self.sha256:
            raise PageUnavailable(_CHANGED)
        if held:
            yield held

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> SourceFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_source(doc: DocumentInfo) -> SourceFile:
    """The file ``doc`` was ingested from, open and checked to hold the ingested bytes (read once, not kept)."""
    file, size = _open_file(doc)
    source = SourceFile(file, size, doc.content_sha256)
    try:
        if not source.matches():
            raise PageUnavailable(_CHANGED)
    except BaseException:
        source.close()
        raise
    return source


def _check_page(doc: DocumentInfo, page: int) -> None:
    if not 1 <= page <= doc.pages:
        raise PageUnavailable(f"{doc.pdf} has pages 1 to {doc.pages}, not {page}")


def _in_child(op: str, doc: DocumentInfo, page: int, **args):
    try:
        return pdf_pool().call(op, source_bytes(doc), page=page, **args)
    except PdfRejected as exc:
        raise PageUnavailable(f"page {page} cannot be shown: {exc}") from None


def page_png(doc: DocumentInfo, page: int, cache_dir: Path, cache_bytes: int | None = None) -> BinaryIO:
    """The rendered page, open for reading (so trimming the cache meanwhile cannot take it away), from the cache or
    rendered now (long side at most ``CITESTREAM_PDF_RENDER_MAX_PX``); the cache then trimmed to ``cache_bytes``."""
    _check_page(doc, page)
    max_px = get_settings().pdf_render_max_px
    out = cache_dir / doc.content_sha256 / f"p{page}-x{RENDER_SCALE:g}-max{max_px}.png"
    with contextlib.suppress(FileNotFoundError):  # whole once it exists: written aside, then renamed
        shown = open(out, "rb")  # noqa: SIM115 - the caller streams and closes it
        os.utime(out)  # shown now: the last to be removed
        return shown
    with _locks_guard:
        lock, waiters = _locks.get(out, (threading.Lock(), 0))
        _locks[out] = (lock, waiters + 1)
    try:
        with lock:
            if not out.exists():  # a request just before this one may have rendered it
                _, png = _in_child("render", doc, page, scale=RENDER_SCALE)
                out.parent.mkdir(parents=True, exist_ok=True)
                tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
                tmp.write_bytes(png)
                tmp.replace(out)
            shown = open(out, "rb")  # noqa: SIM115
            if cache_bytes is not None:
                trim_cache(cache_dir, cache_bytes, keep=out)
    finally:
        with _locks_guard:
            lock, waiters = _locks[out]
            if waiters == 1:
                del _locks[out]
            else:
                _locks[out] = (lock, waiters - 1)
    return shown


def trim_cache(cache_dir: Path, most_bytes: int, keep: Path | None = None) -> int:
    """Remove the least recently shown images until the cache holds at most ``most_bytes``; returns its size."""
    files = []
    for path in cache_dir.glob("*/*.png"):
        try:
            info = path.stat()
        except FileNotFoundError:  # removed by another page meanwhile
            continue
        files.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= most_bytes:
            break
        if path != keep:
            path.unlink(missing_ok=True)
            total -= size
    return total


def _key(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


MAX_QUOTE_CHARS = 2000
_CLOSING = set("%.,;:!?)]}’”'\"")
_OPENING = set("([{‘“'\"")


def quoted(chunk_text: str, quote: str) -> str:
    """The sentence a citation quotes, when the chunk holds it (its letters and digits, in order); else "" (the whole
    chunk is marked). The browser names the sentence; only one the chunk holds is ever marked on the page."""
    quote = " ".join(quote.split())[:MAX_QUOTE_CHARS]
    key = _key(quote)
    return quote if len(key) >= 3 and key in _key(chunk_text) else ""


class KeptBoxes:
    """The highlight boxes of the ``size`` chunks shown last, by document content, page and chunk text."""

    def __init__(self, size: int):
        self.size = size
        self._kept: OrderedDict[tuple, list[Box]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(doc: DocumentInfo, page: int, chunk_text: str) -> tuple:
        """The document's content and its file as it is now (a file changed since ingest is a new key, so its
        boxes are made again and say that it changed), the page and the chunk's text."""
        try:
            info = _source_path(doc).stat()
            file = (info.st_ino, info.st_size, info.st_mtime_ns)
        except (PageUnavailable, OSError):
            file = None
        return doc.content_sha256, file, page, hashlib.sha256(chunk_text.encode()).hexdigest()

    def kept(self, doc: DocumentInfo, page: int, chunk_text: str) -> list[Box] | None:
        key = self._key(doc, page, chunk_text)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        return None

    def make(self, doc: DocumentInfo, page: int, chunk_text: str) -> list[Box]:
        """``highlight_boxes``, kept."""
        boxes = highlight_boxes(doc, page, chunk_text)
        with self._lock:
            self._kept[self._key(doc, page, chunk_text)] = boxes
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return boxes


def highlight_boxes(doc: DocumentInfo, page: int, chunk_text: str) -> list[Box]:
    """Where ``chunk_text`` (the quoted sentence, or the whole chunk) sits on the page.

    Exactly, when the page's characters hold it: its letters and digits are found in the page's (which survives what
    ingest cleaned: joined hyphenation, merged lines), widened to whole words, and each line it covers is one box
    (``quote_boxes``). Otherwise, by text segment (``segment_boxes``): a segment whose letters and digits occur in
    the text, kept only in the longest run of such segments, so a phrase that recurs elsewhere on the page ("the
    applicant should") is not marked there.
    """
    _check_page(doc, page)
    reply, _ = _in_child("boxes", doc, page)
    try:
        width, height = float(reply["width"]), float(reply["height"])
        rects = [(float(left), float(bottom), float(right), float(top))
                 for left, bottom, right, top, _ in reply["segments"]]
        segments = [_key(str(text)) for *_, text in reply["segments"]]
        chars = str(reply.get("chars", ""))
        charboxes = [tuple(float(v) for v in b) for b in reply.get("charboxes", [])]
    except (KeyError, TypeError, ValueError):
        raise PageUnavailable("the PDF reader's reply was malformed") from None
    if width <= 0 or height <= 0:
        raise PageUnavailable(f"page {page} has no area")
    if len(charboxes) == len(chars) and (lines := quote_boxes(chars, charboxes, chunk_text)):
        return [_fraction(rect, width, height) for rect in lines]
    return [_fraction(rect, width, height) for rect in segment_boxes(rects, segments, _key(chunk_text))]


def _fraction(rect: tuple[float, float, float, float], width: float, height: float) -> Box:
    left, bottom, right, top = rect
    return Box(round(left / width, 5), round(1 - top / height, 5), round((right - left) / width, 5),
               round((top - bottom) / height, 5))


def quote_boxes(chars: str, charboxes: list, quote: str) -> list[tuple[float, float, float, float]]:
    """One rectangle per line the quote covers on the page (pdfium's coordinates), or [] when the page's characters
    do not hold the quote's letters and digits in order. The match is widened to whole words, so no box starts or
    ends inside a word."""
    wanted = _key(quote)
    if len(wanted) < 3:
        return []
    where = [i for i, c in enumerate(chars.lower()) if "0" <= c <= "9" or "a" <= c <= "z"]
    page_key = "".join(chars[i].lower() for i in where)
    at = page_key.find(wanted)
    if at < 0:
        return []
    start, end = where[at], where[at + len(wanted) - 1]
    while start > 0 and chars[start - 1].isalnum():
        start -= 1
    while end + 1 < len(chars) and chars[end + 1].isalnum():
        end += 1
    while end + 1 < len(chars) and chars[end + 1] in _CLOSING:  # "70%", "batch.", "(DOACs)"
        end += 1
    while start > 0 and chars[start - 1] in _OPENING:
        start -= 1
    lines: list[list[float]] = []
    for i in range(start, end + 1):
        if chars[i].isspace() or not chars[i].isprintable():
            continue
        left, bottom, right, top = charboxes[i]
        if right <= left or top <= bottom:
            continue
        line = lines[-1] if lines else None
        middle = (bottom + top) / 2
        if line and line[1] <= middle <= line[3] and left >= line[0] - 2:  # same line, reading on
            line[0], line[1], line[2], line[3] = min(line[0], left), min(line[1], bottom), max(line[2], right), \
                max(line[3], top)
        else:
            lines.append([left, bottom, right, top])
    return [(a, b, c, d) for a, b, c, d in lines]


def segment_boxes(rects: list, segments: list[str], wanted: str) -> list[tuple[float, float, float, float]]:
    """The segments whose letters and digits occur in ``wanted``, in the longest run of neighbouring ones (a short
    word counts next to a found one; a bare number never: margin line numbers sit next to every line)."""
    found = [len(s) >= MIN_MATCH_CHARS and s in wanted for s in segments]
    marked = [f or (not s.isdigit() and bool(s) and s in wanted
                    and any(found[j] for j in (i - 1, i + 1) if 0 <= j < len(found)))
              for i, (s, f) in enumerate(zip(segments, found))]
    runs: list[list[int]] = []
    for i, m in enumerate(marked):
        if m:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
    if not runs:
        return []
    best = max(runs, key=lambda run: sum(len(segments[i]) for i in run))
    return [rects[i] for i in best]
