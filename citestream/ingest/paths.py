"""Which files ingestion may read: regular files inside the configured roots, never more bytes than the cap.

A ``documents.ingest`` record comes from whoever can publish to the topic, and
the worker reads with its own rights, so a path in a record is a request, not
an instruction. ``request_paths`` resolves each path (``realpath``: symlinks and
``..`` undone) and keeps it only inside ``CITESTREAM_INGEST_ROOTS``; ``/proc``,
``/sys`` and ``/dev`` are refused even under a root. A refused path gets the same
message whether or not it exists, so the topic is no oracle for the worker's
files. ``read_capped`` then checks the file type and size with ``stat`` before
it opens anything, opens without following a last-component symlink and without
blocking (a FIFO swapped in meanwhile), checks again on the open descriptor
(and, given roots, where the descriptor really points), and never reads more
than the cap. The CLI (an operator's own files) uses ``read_capped`` too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..config import PROJECT_ROOT, Settings
from ..store.chunks import CLI, UPLOAD

FORBIDDEN = (Path("/proc"), Path("/sys"), Path("/dev"))
OUTSIDE = "not inside an ingest root (CITESTREAM_INGEST_ROOTS)"


class PathRefused(Exception):
    """A path ingestion will not read; the message is safe to publish."""


def ingest_roots(settings: Settings) -> list[Path]:
    """The configured roots (``CITESTREAM_INGEST_ROOTS``, comma- or colon-separated), resolved.

    Default: ``../shared/corpus``, the demo's PDFs and the web page's uploads.
    """
    raw = [p for part in settings.ingest_roots.split(",") for p in part.split(os.pathsep) if p.strip()]
    if not raw:
        raw = [str(PROJECT_ROOT.parent / "shared" / "corpus"), str(settings.state_dir / "demo-pdfs"),
               str(settings.uploads_dir)]
    return [Path(os.path.realpath(os.path.expanduser(p.strip()))) for p in raw]


def origin_of(path: Path, roots: list[Path], uploads: Path) -> str:
    """Who owns a file's document: the web page's uploads (``upload``), else the innermost root holding it
    (``root:<its folder name>``), else the command line (``cli``: the operator's own file, outside every root)."""
    real = Path(os.path.realpath(path))
    if Path(os.path.realpath(uploads)) in real.parents:
        return UPLOAD
    holding = [root for root in roots if root in real.parents]
    return f"root:{max(holding, key=lambda root: len(root.parts)).name}" if holding else CLI


def discard_upload(path: Path, uploads: Path) -> None:
    """Delete an upload that failed to ingest, and its folder once empty: nothing would ever read it again."""
    uploads, real = Path(os.path.realpath(uploads)), Path(os.path.realpath(path))
    if uploads not in real.parents or not real.is_file():
        return
    real.unlink(missing_ok=True)
    if real.parent != uploads:
        with contextlib.suppress(OSError):  # not empty: another upload of the same bytes under another name
            real.parent.rmdir()


def _within(path: Path, roots: Iterable[Path]) -> bool:
    if any(path == f or f in path.parents for f in FORBIDDEN):
        return False
    return any(path == root or root in path.parents for root in roots)


def request_paths(paths: Iterable[str], roots: list[Path], max_files: int) -> Iterator[tuple[str, Path | PathRefused]]:
    """Each requested path as ``(as given, resolved file or the reason it is refused)``; folders give their PDFs."""
    count = 0
    for given in paths:
        real = Path(os.path.realpath(given))
        if not _within(real, roots):
            yield given, PathRefused(f"{given}: {OUTSIDE}")
            continue
        try:
            mode = os.stat(real).st_mode
        except FileNotFoundError:
            yield given, PathRefused(f"{given}: No such file or directory")
            continue
        except OSError as exc:
            yield given, PathRefused(f"{given}: cannot be read ({exc.strerror})")
            continue
        if stat.S_ISDIR(mode):
            children = sorted(real.glob("*.pdf"))
        else:
            children = [real]
        for child in children:
            count += 1
            if count > max_files:
                yield str(child), PathRefused(f"{child.name}: more than {max_files} files in one request")
                return
            child_real = Path(os.path.realpath(child))
            if not _within(child_real, roots):
                yield str(child), PathRefused(f"{child}: {OUTSIDE}")
            else:
                yield (given if child is real else str(child)), child_real


def read_capped(path: Path, max_bytes: int, roots: list[Path] | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; ``PathRefused`` for anything else."""
    name = path.name or str(path)
    try:
        before = os.stat(path)
    except FileNotFoundError:
        raise PathRefused(f"{name}: No such file or directory") from None
    except OSError as exc:
        raise PathRefused(f"{name}: cannot be read ({exc.strerror})") from None
    _check(before, name, max_bytes)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise PathRefused(f"{name}: cannot be opened ({exc.strerror})") from None
    try:
        _check(os.fstat(fd), name, max_bytes)  # the file opened is the file checked, not one swapped in
        if roots is not None:
            opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if not _within(opened, roots):
                raise PathRefused(f"{name}: {OUTSIDE}")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > max_bytes:
                raise PathRefused(f"{name}: larger than the {max_bytes}-byte limit")
            chunks.append(chunk)
    finally:
        os.close(fd)


def _check(info: os.stat_result, name: str, max_bytes: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise PathRefused(f"{name}: not a regular file (a device, FIFO, socket or folder)")
    if info.st_size > max_bytes:
        raise PathRefused(f"{name}: {info.st_size} bytes; the limit is {max_bytes}")
