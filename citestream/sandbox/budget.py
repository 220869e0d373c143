"""What opening one PDF may cost: the child's rlimits and the caps on what the PDF may hold.

Shared by the parent (which reads them from the settings) and the child (which
receives them with each request), so it imports nothing of citestream.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

CELL_GAP = 2.5
"""A gap wider than this many times the text's height parts two table cells: the child cuts a line pdfium emitted
whole at such gaps, and ``ingest.layout`` reads a gap between two fragments the same way. Here because both sides
import this module."""


class PdfRejected(Exception):
    """The PDF was not opened, parsed or rendered; the message says why in words a publisher can act on."""


@dataclass(frozen=True)
class PdfLimits:
    memory_mb: int = 768  # the child's address space (RLIMIT_AS)
    cpu_s: int = 30  # CPU seconds per request (RLIMIT_CPU)
    wall_s: float = 60.0  # the parent stops waiting and kills the child after this long
    max_pages: int = 1000
    max_page_chars: int = 50_000
    max_chars: int = 1_000_000  # all pages together
    max_page_pt: float = 5000.0  # the longer side of a page, in points (1/72 in)
    max_render_px: int = 4000  # the longer side of a rendered page, in pixels

    def as_dict(self) -> dict:
        return asdict(self)

    def reply_bytes(self) -> int:
        """The largest reply a child may send: a parse at the character caps (text twice, fragments' geometry)
        or a PNG; anything longer is not read."""
        return 32 * (1 << 20) + 32 * self.max_chars
