"""The child process that opens PDFs: ``python -m citestream.sandbox.child MEMORY_MB``.

It caps its own address space before it reads anything (RLIMIT_AS: a PDF that inflates past it kills this
process, not the worker), writes no file and makes no core dump; started as root it becomes ``nobody``, who cannot
enter the state folder (keys, passwords, the broker's data). Then it serves one request at a time from stdin
until stdin closes. Each request sets the CPU limit anew for that request (RLIMIT_CPU: SIGXCPU ends it), and the
parent kills it when the wall time is up. Frames (``frames``) carry a JSON header and a binary body both ways.
Stray output of a library goes to stderr, never into the replies.
"""

from __future__ import annotations

import os
import pwd
import resource
import signal
import sys

from . import frames, pdfium_ops
from .budget import PdfLimits, PdfRejected

OPS = {
    "parse": lambda data, limits, args: (pdfium_ops.parse(data, limits), b""),
    "render": lambda data, limits, args: (None, pdfium_ops.render(data, int(args["page"]), float(args["scale"]),
                                                                  limits)),
    "boxes": lambda data, limits, args: (pdfium_ops.text_boxes(data, int(args["page"]), limits), b""),
}


def _limit_self(memory_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # replies go through the pipe; no file is ever written


def _drop_privileges() -> None:
    """As root, become ``nobody`` (everything this process needs is already loaded); as anyone else, stay."""
    if os.getuid() != 0:
        return
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        return
    os.setgroups([])
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)


def _tiny_pdf() -> bytes:
    """A one-page PDF with a word on it, for the warm-up."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length 35 >>\nstream\nBT /F1 12 Tf 10 50 Td (warm) Tj ET\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return bytes(out + b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref)


def _warm_up() -> None:
    """Every operation once, on a PDF of our own: whatever pdfium, PIL and the codecs load lazily is loaded now,
    while this process may still read the interpreter's files (``nobody`` may not)."""
    pdf, limits = _tiny_pdf(), PdfLimits()
    for op, args in (("parse", {}), ("boxes", {"page": 1}), ("render", {"page": 1, "scale": 1.0})):
        try:
            OPS[op](pdf, limits, args)
        except ImportError:  # no PIL: a worker without the web extra never renders
            pass


def _limit_cpu(seconds: int) -> None:
    """``seconds`` of CPU from now: the limit counts the process's whole life, so it moves on with each request."""
    used = sum(os.times()[:2])
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(used) + max(1, seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def serve(inbox, outbox) -> None:
    while (request := frames.read(inbox)) is not None:
        header, data = request
        limits = PdfLimits(**header["limits"])
        _limit_cpu(limits.cpu_s)
        try:
            value, body = OPS[header["op"]](data, limits, header.get("args", {}))
            frames.write(outbox, {"ok": value}, body)
        except PdfRejected as exc:
            frames.write(outbox, {"rejected": str(exc)})
        except MemoryError:
            frames.write(outbox, {"rejected": f"needs more than the {limits.memory_mb} MB it may use "
                                              "(CITESTREAM_PDF_MEMORY_MB)"})
        except Exception as exc:  # noqa: BLE001 - whatever pdfium or PIL raised: the PDF's fate, not ours
            frames.write(outbox, {"rejected": f"could not be read ({type(exc).__name__}: {str(exc)[:200]})"})


def main() -> None:
    _limit_self(int(sys.argv[1]))
    _warm_up()
    _drop_privileges()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the parent's to handle; EOF ends us
    outbox = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, outbox)


if __name__ == "__main__":
    main()
