"""PDFs are opened only in a limited child process (citestream/sandbox): each limit and cap refuses a PDF with its
reason, the process that asked never holds what the PDF inflates to, and a child that died or ran late is replaced
by a fresh one. Real child processes and real pdfium; every hostile PDF is written by the test."""

from __future__ import annotations

import io
import resource
import time

import pytest
from PIL import Image

from citestream.ingest.pdf import UnreadablePdf, read_pages
from citestream.sandbox.budget import PdfLimits, PdfRejected
from citestream.sandbox.pool import PdfPool

from citestream.ingest.layout import extract_blocks
from tests.support.regexes import own_cpu_s
from tests.support.ingest import (
    PageSpec, prose, write_guidance_pdf, write_inflating_pdf, write_marked_line_pdf, write_slow_render_pdf,
    write_text_pdf,
)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture()
def guidance(tmp_path):
    return write_guidance_pdf(tmp_path / "guidance.pdf", [PageSpec("I. SCOPE", prose("calibration", 12)),
                                                          PageSpec("II. MORE", prose("sterility", 12)),
                                                          PageSpec("III. END", prose("retention", 12))])


def test_a_decompression_bomb_kills_the_child_not_the_process_that_asked(tmp_path, guidance):
    bomb = write_inflating_pdf(tmp_path / "bomb.pdf")  # 187 kB; 96 MB of text operators once inflated
    assert bomb.stat().st_size < 400_000
    before = _peak_rss_mb()
    started = time.monotonic()
    with pytest.raises(UnreadablePdf, match=r"bomb.pdf: the PDF reader stopped \(signal SIG\w+\).*"
                                            r"CITESTREAM_PDF_MEMORY_MB"):
        read_pages(bomb)
    print(f"bomb refused in {time.monotonic() - started:.1f} s; this process's peak RSS {before:.0f} -> "
          f"{_peak_rss_mb():.0f} MB")
    assert _peak_rss_mb() - before < 100  # parsed here, it would have taken gigabytes (14 GB measured, no limit)
    assert [p.number for p in read_pages(guidance)] == [1, 2, 3]  # a fresh child reads the next PDF


@pytest.mark.parametrize("limits, make, reason", [
    (PdfLimits(max_pages=2), None, r"3 pages; the limit is 2 \(CITESTREAM_PDF_MAX_PAGES\)"),
    (PdfLimits(), lambda p: write_text_pdf(p, 60_000, font=1),
     r"page 1 holds 6\d{4} characters; the limit is 50000 \(CITESTREAM_PDF_MAX_PAGE_CHARS\)"),
    (PdfLimits(max_chars=1500), None, r"more than 1500 characters by page 2 \(CITESTREAM_PDF_MAX_CHARS\)"),
    (PdfLimits(), lambda p: write_text_pdf(p, size=(6000, 6000)),
     r"page 1 is 6000 x 6000 pt; the limit is 5000 pt a side \(CITESTREAM_PDF_MAX_PAGE_PT\)"),
], ids=["pages", "characters-per-page", "characters", "page-size"])
def test_each_cap_refuses_a_pdf_with_its_reason(tmp_path, guidance, limits, make, reason):
    path = make(tmp_path / "over.pdf") if make else guidance
    with pytest.raises(PdfRejected, match=reason):
        PdfPool(limits, 1).call("parse", path.read_bytes())


def test_a_page_that_burns_cpu_is_stopped_by_the_cpu_limit(tmp_path):
    slow = write_slow_render_pdf(tmp_path / "slow.pdf")  # minutes of CPU to render, a few MB of memory
    pool = PdfPool(PdfLimits(cpu_s=1), 1)
    started = time.monotonic()
    with pytest.raises(PdfRejected, match=r"needs more than 1 s of CPU \(CITESTREAM_PDF_CPU_S\)"):
        pool.call("render", slow.read_bytes(), page=1, scale=2.0)
    assert time.monotonic() - started < 30


def test_a_child_still_busy_at_the_wall_time_is_killed_and_replaced(tmp_path, guidance):
    slow = write_slow_render_pdf(tmp_path / "slow.pdf")
    pool = PdfPool(PdfLimits(wall_s=2.0), 1)
    started = time.monotonic()
    with pytest.raises(PdfRejected, match=r"took longer than 2 s \(CITESTREAM_PDF_WALL_S\)"):
        pool.call("render", slow.read_bytes(), page=1, scale=2.0)
    assert time.monotonic() - started < 10
    (pages, _metadata), _ = pool.call("parse", guidance.read_bytes())
    assert len(pages) == 3


def test_a_huge_page_renders_within_the_pixel_cap(tmp_path, guidance):
    """A 6,000-pt page at scale 2 is a 12,000-px square (576 MB as a bitmap): rendered at most 4,000 px a side."""
    huge = write_text_pdf(tmp_path / "huge.pdf", size=(6000, 6000)).read_bytes()
    capped = PdfPool(PdfLimits(), 1)  # the page-size cap is ingest's: a render is bounded by its pixel cap
    _, png = capped.call("render", huge, page=1, scale=2.0)
    assert Image.open(io.BytesIO(png)).size == (4000, 4000)
    _, normal = capped.call("render", guidance.read_bytes(), page=1, scale=2.0)
    assert Image.open(io.BytesIO(normal)).size == (1224, 1584)  # a letter page keeps its scale
    uncapped = PdfPool(PdfLimits(max_render_px=100_000), 1)
    with pytest.raises(PdfRejected, match="CITESTREAM_PDF_MEMORY_MB"):  # what the cap spares the child
        uncapped.call("render", huge, page=1, scale=2.0)


def test_a_line_of_24900_footnote_marks_is_read_in_well_under_a_second(tmp_path):
    """Issue 54: the page's one line holds 24,900 raised digits, each a footnote mark after a letter. Cutting the
    marks out of the line read all the text before each one (4.8 s of CPU in ``extract_blocks``, in the worker,
    outside the sandbox); now each mark costs the same whatever stands before it."""
    pdf = write_marked_line_pdf(tmp_path / "marks.pdf")
    assert 1_000_000 < pdf.stat().st_size < 1_200_000
    pages = read_pages(pdf)
    assert [len(f.marks) for f in pages[0].fragments] == [24_900]  # one line, every digit a mark
    extracted = []
    cpu_s = own_cpu_s(lambda: extracted.append(extract_blocks(pages)))
    [blocks] = extracted
    print(f"extract_blocks: {cpu_s:.3f} s of CPU for 24,900 marks on one line")
    assert cpu_s < 0.5
    body = next(b for b in blocks if b.kind == "text")
    assert body.text == "Marks" + "a" * 24_900  # the marks are cut, the letters kept
