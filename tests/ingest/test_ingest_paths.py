"""Ingest paths: only regular files inside the roots, within the size cap, and no oracle for files outside.

In process (``ingest.paths`` and ``ingest_request``); tests/streams/test_hostile.py sends the same probes through the
broker to a worker.
"""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from citestream.ingest import PathRefused, ingest_request
from citestream.ingest.paths import OUTSIDE, read_capped, request_paths
from citestream.models import IngestRequest

from tests.support.ingest import PageSpec, prose, write_guidance_pdf

CAP = 1024 * 1024


def _resolved(paths: list[str], roots: list[Path]) -> dict[str, Path | PathRefused]:
    return dict(request_paths(paths, [Path(os.path.realpath(r)) for r in roots], max_files=50))


@pytest.fixture()
def root(tmp_path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    write_guidance_pdf(folder / "Good.pdf", [PageSpec("I. SCOPE", prose("validation", 4))])
    return folder


def test_a_file_inside_the_root_is_read(root):
    got = _resolved([str(root / "Good.pdf")], [root])
    assert got == {str(root / "Good.pdf"): (root / "Good.pdf").resolve()}
    assert read_capped(root / "Good.pdf", CAP, [root.resolve()]).startswith(b"%PDF-")


@pytest.mark.parametrize("probe", ["/etc/passwd", "/etc/shadow", "/proc/self/environ", "/nonexistent/secret.pdf",
                                   "../../../../etc/shadow", "/etc/does-not-exist"])
def test_paths_outside_the_roots_are_refused_alike_whether_they_exist_or_not(root, probe):
    refused = _resolved([probe], [root])[probe]
    assert isinstance(refused, PathRefused)
    assert str(refused) == f"{probe}: {OUTSIDE}"  # the same words for /etc/passwd and /etc/does-not-exist


def test_proc_sys_and_dev_are_refused_even_under_a_root_of_slash():
    got = _resolved(["/proc/self/environ", "/sys/kernel/hostname", "/dev/zero"], [Path("/")])
    assert all(isinstance(v, PathRefused) and OUTSIDE in str(v) for v in got.values())


def test_a_symlink_out_of_the_root_is_refused(root, tmp_path):
    (root / "escape.pdf").symlink_to("/etc/passwd")
    (root / "zero.pdf").symlink_to("/dev/zero")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Other.pdf").write_bytes(b"%PDF-1.4 outside")
    (root / "linked-folder").symlink_to(outside, target_is_directory=True)
    got = _resolved([str(root / "escape.pdf"), str(root / "zero.pdf"), str(root / "linked-folder")], [root])
    assert all(isinstance(v, PathRefused) and OUTSIDE in str(v) for v in got.values()), got


def test_a_folder_inside_the_root_gives_its_pdfs_but_not_a_pdf_symlink_to_dev_zero(root):
    (root / "zero.pdf").symlink_to("/dev/zero")
    got = _resolved([str(root)], [root])
    assert got[str(root / "Good.pdf")] == (root / "Good.pdf").resolve()
    assert isinstance(got[str(root / "zero.pdf")], PathRefused)


def test_a_pdf_symlink_to_dev_zero_is_refused_at_once_where_no_roots_apply(root):
    """The CLI reads an operator's files without roots: the file-type check still refuses /dev/zero unread."""
    (root / "zero.pdf").symlink_to("/dev/zero")
    started = time.monotonic()
    with pytest.raises(PathRefused, match="not a regular file"):
        read_capped(root / "zero.pdf", CAP)  # no roots: the CLI's own reads
    assert time.monotonic() - started < 1


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_device_node_inside_the_root_is_refused(root):
    node = root / "null.pdf"
    os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # a second /dev/zero, inside the root
    [(_given, resolved)] = _resolved([str(node)], [root]).items()
    assert resolved == node.resolve()  # inside the root ...
    with pytest.raises(PathRefused, match="not a regular file"):
        read_capped(resolved, CAP, [root.resolve()])  # ... but never opened


def test_a_fifo_inside_the_root_neither_blocks_nor_is_read(root):
    fifo = root / "pipe.pdf"
    os.mkfifo(fifo)
    done = threading.Event()

    def read() -> None:
        with pytest.raises(PathRefused, match="not a regular file"):
            read_capped(fifo, CAP, [root.resolve()])
        done.set()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    assert done.wait(5), "reading a FIFO blocked"


def test_a_socket_inside_the_root_is_refused(root):
    path = root / "sock.pdf"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(PathRefused, match="not a regular file"):
            read_capped(path, CAP, [root.resolve()])


def test_the_size_cap_is_checked_before_reading_and_the_read_never_exceeds_it(root):
    big = root / "Big.pdf"
    big.write_bytes(b"%PDF-" + b"0" * (CAP + 10))
    with pytest.raises(PathRefused, match="the limit is"):
        read_capped(big, CAP)
    exact = root / "Exact.pdf"
    exact.write_bytes(b"x" * CAP)
    assert len(read_capped(exact, CAP)) == CAP


def test_ingest_request_reports_refusals_in_errors_and_ingests_the_rest(root, store, embedder):
    (root / "zero.pdf").symlink_to("/dev/zero")
    os.mkfifo(root / "pipe.pdf")
    request = IngestRequest(request_id="paths-1", paths=[
        str(root / "Good.pdf"), "/etc/passwd", "/proc/self/environ", "../../../../etc/shadow",
        str(root / "zero.pdf"), str(root / "pipe.pdf"), str(root / "missing.pdf")])
    result = ingest_request(request, store, embedder, roots=[root])
    assert result.status == "ok" and result.outputs.docIds == ["Good"]
    reasons = {e.path: e.reason for e in result.outputs.errors}
    for probe in ("/etc/passwd", "/proc/self/environ", "../../../../etc/shadow", str(root / "zero.pdf")):
        assert reasons[probe] == f"{probe}: {OUTSIDE}"
    assert "not a regular file" in reasons[str(root / "pipe.pdf")]
    assert "No such file" in reasons[str(root / "missing.pdf")]


def test_inline_document_and_claim_caps_are_part_of_the_contract():
    from pydantic import ValidationError

    from citestream.models import ClaimVerifyRequest
    from citestream.models.limits import MAX_CLAIMS, MAX_INLINE_DOCUMENTS, MAX_PATHS

    doc = {"docId": "d", "text": "x"}
    with pytest.raises(ValidationError, match="at most"):
        IngestRequest(request_id="r", documents=[doc] * (MAX_INLINE_DOCUMENTS + 1))
    with pytest.raises(ValidationError, match="bytes of text"):
        IngestRequest(request_id="r", documents=[{"docId": f"d{i}", "text": "é" * 300_000} for i in range(2)])
    with pytest.raises(ValidationError, match="at most"):
        IngestRequest(request_id="r", paths=["a.pdf"] * (MAX_PATHS + 1))
    with pytest.raises(ValidationError, match="at most"):
        ClaimVerifyRequest(request_id="r", claims=[{"id": str(i), "text": "c"} for i in range(MAX_CLAIMS + 1)])
    with pytest.raises(ValidationError, match="at most"):
        ClaimVerifyRequest(request_id="r", claims=[{"id": "1", "text": "c" * 5000}])


@pytest.fixture()
def store(engine):
    from citestream.store import ChunkStore

    return ChunkStore(engine)
