"""What a child does with a PDF's bytes (pypdfium2): each page's text and geometry, a page as PNG, a page's text boxes.

Runs only inside ``child``: pdfium meets untrusted bytes here and nowhere else. Every cap of ``PdfLimits`` is
checked as early as pdfium allows (the page count and, for ingest, each page's size before any page is loaded;
characters as each page is read), so a PDF over a cap stops with its reason instead of after the work. Replies
are plain lists and numbers: the parent builds its own records from them and trusts nothing else.

A fragment is one line as pdfium's text stream emits it, with its box, font size and weight; ``ingest.layout``
rebuilds visual lines from them.
"""

from __future__ import annotations

import io
import re
from bisect import bisect_left

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from .budget import CELL_GAP, PdfLimits, PdfRejected

_LINE_BREAK = re.compile(r"\r\n|\r|\n|(?<=\ufffe)")
"""pdfium ends a line hyphenated at its end with U+FFFE and runs on into the next line: split there too."""
_LEAD_NUMBER = re.compile(r"^(\d{1,4})(?:\s+|$)")


def open_pdf(data: bytes, limits: PdfLimits) -> pdfium.PdfDocument:
    """The document, once its page count is within the cap (no page is loaded yet)."""
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc).lower()
        if "password" in message or "security" in message:
            raise PdfRejected("encrypted PDF (a password is required)") from None
        raise PdfRejected(f"corrupt or not a PDF ({exc})") from None
    count = len(pdf)
    if count > limits.max_pages:
        pdf.close()
        raise PdfRejected(f"{count} pages; the limit is {limits.max_pages} (CITESTREAM_PDF_MAX_PAGES)")
    return pdf


def _check_page_sizes(pdf: pdfium.PdfDocument, limits: PdfLimits) -> None:
    """Every page's size within the cap, read from the page tree (no page is loaded). Ingest only: a render's cost
    is bounded by its pixel cap whatever the page's size."""
    for index in range(len(pdf)):
        width, height = pdf.get_page_size(index)
        if max(width, height) > limits.max_page_pt:
            raise PdfRejected(f"page {index + 1} is {width:.0f} x {height:.0f} pt; the limit is "
                              f"{limits.max_page_pt:.0f} pt a side (CITESTREAM_PDF_MAX_PAGE_PT)")


def _checked_chars(textpage, number: int, limits: PdfLimits) -> int:
    chars = textpage.count_chars()
    if chars > limits.max_page_chars:
        raise PdfRejected(f"page {number} holds {chars} characters; the limit is {limits.max_page_chars} "
                          "(CITESTREAM_PDF_MAX_PAGE_CHARS)")
    return chars


def parse(data: bytes, limits: PdfLimits) -> list:
    """``[pages, metadata]``. Per page: ``[width, height, plain text, fragments]``; a fragment is
    ``[text, x0, x1, bottom, top, size, bold, lead_number, lead_gap, marks, rest_x0]`` (PDF units, origin
    bottom-left; ``marks``: the ``[start, end]`` of each run of digits in ``text`` that belongs to no sentence:
    footnote marks and margin numbers, see ``_marks``; ``rest_x0``: where the text after a leading number starts).
    ``metadata``: the document information's text fields (author, title, ...), as ``[key, value]`` pairs."""
    pdf = open_pdf(data, limits)
    try:
        _check_page_sizes(pdf, limits)
        pages, total = [], 0
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            total += _checked_chars(textpage, index + 1, limits)
            if total > limits.max_chars:
                raise PdfRejected(f"more than {limits.max_chars} characters by page {index + 1} "
                                  "(CITESTREAM_PDF_MAX_CHARS)")
            width, height = page.get_size()
            text = textpage.get_text_range()
            pages.append([width, height, _plain(text), _fragments(textpage, text)])
            textpage.close()
            page.close()
        return [pages, _metadata(pdf)]
    finally:
        pdf.close()


def render(data: bytes, page_no: int, scale: float, limits: PdfLimits) -> bytes:
    """The page as PNG at ``scale``, or smaller: its longer side never exceeds ``limits.max_render_px``."""
    pdf = open_pdf(data, limits)
    try:
        _check_page_no(pdf, page_no)
        width, height = pdf.get_page_size(page_no - 1)
        scale = min(scale, limits.max_render_px / max(width, height, 1.0))
        image = pdf[page_no - 1].render(scale=scale).to_pil()
        out = io.BytesIO()
        image.save(out, format="PNG")
        return out.getvalue()
    finally:
        pdf.close()


def text_boxes(data: bytes, page_no: int, limits: PdfLimits) -> dict:
    """The page's size, its text segments and its characters: ``{"width", "height", "segments": [[left, bottom,
    right, top, text], ...], "chars": text, "charboxes": [[left, bottom, right, top], ...]}`` (pdfium's rectangles,
    each with the text it bounds; each character's box, so a quoted sentence is marked exactly)."""
    pdf = open_pdf(data, limits)
    try:
        _check_page_no(pdf, page_no)
        page = pdf[page_no - 1]
        width, height = page.get_size()
        textpage = page.get_textpage()
        _checked_chars(textpage, page_no, limits)
        rects = [textpage.get_rect(i) for i in range(textpage.count_rects())]
        count = textpage.count_chars()
        chars = textpage.get_text_range(0, count) if count else ""
        if len(chars) != count:  # char indexes do not match string offsets: no per-character boxes
            chars, count = "", 0
        return {"width": width, "height": height,
                "segments": [[*rect, textpage.get_text_bounded(*rect)] for rect in rects],
                "chars": chars,
                "charboxes": [[round(v, 2) for v in textpage.get_charbox(i)] for i in range(count)]}
    finally:
        pdf.close()


def _check_page_no(pdf: pdfium.PdfDocument, page_no: int) -> None:
    if not 1 <= page_no <= len(pdf):
        raise PdfRejected(f"the PDF has pages 1 to {len(pdf)}, not {page_no}")


def _metadata(pdf: pdfium.PdfDocument) -> list[list[str]]:
    """The document information's fields, each cut to 500 characters (they are read for the issuer's name)."""
    try:
        info = pdf.get_metadata_dict(skip_empty=True)
    except Exception:  # noqa: BLE001 - a malformed info dictionary is no metadata, not an unreadable PDF
        return []
    return [[str(k)[:40], str(v)[:500]] for k, v in info.items() if isinstance(v, str)]


def _plain(text: str) -> str:
    return re.sub(r"\r\n|\r", "\n", text).replace("\x02", "-").replace("\ufffe", "-\n")


def _fragments(textpage, text: str) -> list[list]:
    aligned = len(text) == textpage.count_chars()  # char indexes match string offsets (almost always)
    out, start = [], 0
    for match in [*_LINE_BREAK.finditer(text), None]:
        end = match.start() if match else len(text)
        line = text[start:end]
        stripped = line.strip()
        if stripped:
            first = start + (len(line) - len(line.lstrip()))
            for a, b in _cells(textpage, stripped, first) if aligned else [(0, len(stripped))]:
                cell = stripped[a:b]
                out.append(_fragment(textpage, cell.replace("\x02", "-").replace("\ufffe", "-"), first + a,
                                     first + b - 1, aligned))
        start = match.end() if match else end
    return out


_SPACES = re.compile(r" +")


def _cells(textpage, text: str, first: int) -> list[tuple[int, int]]:
    """``text`` (a stripped line starting at character ``first``) cut where its words stand further apart than
    ``CELL_GAP`` heights: the cells of a table row pdfium emitted as one line ("Column   Chiral Column, ...").
    A line's leading number stays on it (margin line numbers are read from ``lead_number``). Two character boxes are
    read per run of spaces: linear in the line."""
    cuts, start = [], 0
    cell_left = textpage.get_charbox(first, loose=True)[0]
    for run in _SPACES.finditer(text):
        left = textpage.get_charbox(first + run.start() - 1, loose=True)
        right = textpage.get_charbox(first + run.end(), loose=True)
        height = max(left[3] - left[1], right[3] - right[1], 1.0)
        # reading on to the right: a margin number pdfium put inside the line ("file. 56 The") is no cell
        if right[0] - left[2] > CELL_GAP * height and left[2] > cell_left and not (
                start == 0 and _LEAD_NUMBER.fullmatch(text[:run.end()])):  # a margin line number stays: ``layout``
            #                                                                   reads it as the line's lead number
            cuts.append((start, run.start()))
            start, cell_left = run.end(), right[0]
    cuts.append((start, len(text)))
    return cuts


def _fragment(textpage, text: str, first: int, last: int, aligned: bool) -> list:
    if not aligned:
        return [text, 0.0, 0.0, 0.0, 0.0, 0.0, False, None, 0.0, [], 0.0]
    probes = sorted({first, (first + last) // 2, last})
    boxes = [textpage.get_charbox(i, loose=True) for i in probes]
    heights = [b[3] - b[1] for b in boxes]  # the glyph's font box: a size that holds under scaled text matrices
    tallest = max(range(len(probes)), key=heights.__getitem__)  # the largest glyph: not a superscript
    main = probes[tallest]
    left, right = boxes[0][0], boxes[-1][2]
    _, bottom, _, top = boxes[tallest]
    weight = pdfium_c.FPDFText_GetFontWeight(textpage.raw, main)
    lead_number, lead_gap, rest_x0 = None, 0.0, left
    number = _LEAD_NUMBER.match(text)
    if number:
        lead_number = int(number.group(1))
        digits_end = first + len(number.group(1)) - 1
        rest = number.end()
        if rest >= len(text):
            lead_gap = float("inf")
        else:
            _, _, number_right, _ = textpage.get_charbox(digits_end, loose=False)
            next_left, _, _, _ = textpage.get_charbox(first + rest, loose=False)
            lead_gap, rest_x0 = next_left - number_right, next_left
    marks = _marks(textpage, text, first, heights[tallest], bottom)
    text, marks = _without_ligature_spaces(textpage, text, first, marks)
    return [text, left, right, bottom, top, round(heights[tallest], 1), weight >= 600, lead_number, lead_gap, marks,
            rest_x0]


_AFTER_LIGATURE = re.compile(r"(?<=f[il]) (?=[a-z])")  # not "ff": words set tightly ("staff before") would join


def _without_ligature_spaces(textpage, text: str, first: int, marks: list[list[int]]) -> tuple[str, list[list[int]]]:
    """``text`` without the spaces that lie inside the glyph before them, and ``marks`` moved to match. Some PDFs
    follow a ligature (ﬁ, ﬂ, ﬃ, ﬄ) with a space character drawn inside it: "suffi cient", "identifi ed", "fi rst"
    (the WHO's good distribution practices). It is no gap between words. Only a space after "fi" or "fl" and
    before a lower-case letter is measured, two boxes each."""
    inside = [m.start() for m in _AFTER_LIGATURE.finditer(text) if _drawn_inside(textpage, first + m.start())]
    if not inside:
        return text, marks
    kept = "".join(text[a + 1:b] for a, b in zip([-1, *inside], [*inside, len(text)]))
    return kept, [[start - bisect_left(inside, start), end - bisect_left(inside, end)] for start, end in marks]


def _drawn_inside(textpage, space: int) -> bool:
    """The space starts more than half its width inside the glyph before it (a word gap starts where the glyph ends,
    within a rounding: 0.2 of a 2.8-unit space in the WHO's text; after its ligatures 1.6 of 2.5 to 2.9 of 2.8)."""
    left, _, right, _ = textpage.get_charbox(space)
    before_right = textpage.get_charbox(space - 1)[2]
    return before_right - left > (right - left) / 2


_MARK_RUN = re.compile(r"(?<![0-9])[0-9]+(?:,[0-9]{1,3})*(?![0-9])")


def _marks(textpage, text: str, first: int, height: float, bottom: float) -> list[list[int]]:
    """Runs of digits in ``text`` that are no part of its sentences (``[start, end]``): set smaller than the line's
    tallest glyph and above its baseline (footnote marks: "resources8 to help", "approval.9"), or set left of the
    text before them (a margin line number pdfium emitted inside the line: "validation5 20 data"). Only digits are
    measured, one box each."""
    if height <= 0:
        return []
    out = []
    for run in _MARK_RUN.finditer(text):
        boxes = {i: textpage.get_charbox(first + i, loose=True)
                 for i in range(run.start(), run.end()) if text[i] != ","}
        raised = [i for i, b in boxes.items() if b[3] - b[1] < 0.8 * height and b[1] > bottom + 0.15 * height]
        before = run.start()  # the text before the run, less the spaces right before it: read back, not copied
        while before and text[before - 1].isspace():
            before -= 1
        behind = before > 0 and boxes[run.start()][0] < textpage.get_charbox(first + before - 1, loose=True)[2] - 20
        if behind or (len(raised) == len(boxes) and run.end() - run.start() <= 7):
            out.append([run.start(), run.end()])
        elif raised and raised[0] > run.start() and raised == list(range(raised[0], run.end())):
            out.append([raised[0], run.end()])  # a mark set right after a number: "ISO 13485" + "2"
    return out
