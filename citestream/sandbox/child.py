"""The child process that opens PDFs: ``python -m citestream.sandbox.child MEMORY_MB``.

It caps its own address space before it reads anything (RLIMIT_AS: a PDF that inflates past it kills this
process, not the worker), writes no file and makes no core dump, then serves one request at a time from stdin
until stdin closes. Each request sets the CPU limit anew for that request (RLIMIT_CPU: SIGXCPU ends it), and the
parent kills it when the wall time is up. Frames (``frames``) carry a JSON header and a binary body both ways.
Stray output of a library goes to stderr, never into the replies.
"""

from __future__ import annotations

import os
import resource
import signal
import sys

from . import frames, pdfium_ops
from .limits import PdfLimits, PdfRejected

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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the parent's to handle; EOF ends us
    outbox = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, outbox)


if __name__ == "__main__":
    main()
