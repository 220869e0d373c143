"""Two-pass extraction: fragments → clean visual lines → blocks with their section (pass 1); page check (pass 2).

Pass 1 drops what would pollute chunks (running headers and footers repeated
across pages, page numbers, margin line numbers, footnote marks), rebuilds
visual lines that pdfium split (superscripts, margin numbers), joins words
hyphenated at line ends, groups lines into blocks (paragraphs, list items,
table-like rows, footnotes) and tracks the current heading as ``section``.

Pass 2 compares, page by page, the words pass 1 kept with the words the page
holds (less what cleaning removed on purpose); a page that lost more than
``MIN_COVERAGE`` gets a page-level block under the last known section, so no
page's text is lost.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from ..core.text_units import BULLET_SIGNS, set_apart
from ..sandbox.budget import CELL_GAP
from .pdf import Fragment, RawPage

MIN_COVERAGE = 0.9
EDGE_ZONE = 0.09  # top and bottom share of the page where running headers and footers live
REPEAT_SHARE = 0.4  # a line on this share of pages (and on at least 2) is a running header or footer

_PAGE_NUMBER = re.compile(r"^(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_PAGE_OF = re.compile(r"\bpage\s+\d{1,4}\s*(?:of|/)\s*\d{1,4}\s*$", re.I)  # "... (enhanced display) page 2 of 7"
_SHAPES = "○■□➢►"  # bullets a layout draws beyond the shared set
_BULLET_SIGNS = BULLET_SIGNS + _SHAPES + "·\uf0b7\uf0a7"  # ... and the symbol fonts' (a bold one is no heading)
_BULLET = re.compile(r"^(?:[\-–*" + BULLET_SIGNS + _SHAPES + r"]|\(?(?:\d{1,3}|[a-z]|[ivxlc]{2,4})[.)])\s+", re.I)
"""An item's bullet, number, letter or roman numeral; "RLD. DMF holders ..." (a sentence's last word) opens none."""
_SECTION_NO = re.compile(r"(?:[IVX]{1,5}|[A-Z]|\d{1,2}(?:\.\d{1,2}){0,4})\.?")
"""A section's or a paragraph's number alone: set apart from its heading or paragraph by a tab, it opens no table."""
_NUMBERED_HEADING = re.compile(rf"^{_SECTION_NO.pattern}\s+\S")
_TOC_LEADER = re.compile(r"\.{4,}|(?:\. ){4,}|…{2,}|_{4,}")
_HYPHENATED = re.compile(r"(?<![A-Za-z])[A-Za-z]+-[A-Za-z]+")


@dataclass
class Block:
    """A run of text kept together: a paragraph, a heading, a list item, table rows, a footnote or a whole page."""

    page: int
    text: str
    kind: str = "text"  # text | heading | list | table | note | page
    section: str | None = None


@dataclass
class _Line:
    page: int
    text: str
    x0: float
    bottom: float
    top: float
    size: float
    bold: bool
    table: bool = False
    fragments: list[Fragment] = field(default_factory=list)
    note: bool = False  # in the page's footnotes (``_mark_footnotes``), whatever its type size
    opens: int | None = None  # the number the line opens with, a footnote's own number among others
    cells: list[tuple[float, str, bool]] = field(default_factory=list)  # a table row's cells: (x0, text, bold)


def extract_blocks(pages: list[RawPage]) -> list[Block]:
    """Both passes over a document's pages; blocks come in reading order with exact 1-based pages."""
    removed = _running_lines(pages)
    dropped: dict[int, int] = {}
    all_lines: list[_Line] = []
    per_page: list[tuple[RawPage, list[_Line], set[int]]] = []
    for page in pages:
        kept = [f for f in page.fragments if id(f) not in removed]
        numbered = _drop_line_numbers(kept)
        dropped[page.number] = sum(_alnum(f.text) for f in page.fragments) - sum(_alnum(f.text) for f in numbered)
        lines = _stacked_order(_visual_lines(numbered), page.height)
        per_page.append((page, lines, _footnote_marks(numbered)))
        all_lines.extend(lines)
    body_size, body_bold = _body_style(all_lines)
    for page, lines, marks in per_page:
        _mark_footnotes(lines, marks, body_size, page.height)
    hyphenated = _hyphenated_words(all_lines)
    blocks = _blocks(all_lines, body_size, body_bold, hyphenated)
    return _reconcile(pages, blocks, dropped)


# --- cleaning ----------------------------------------------------------------------------------------------


def _edge(fragment: Fragment, page: RawPage) -> bool:
    return fragment.bottom > page.height * (1 - EDGE_ZONE) or fragment.top < page.height * EDGE_ZONE


_PARAGRAPH_PATH = re.compile(r"(?:\([a-z#]{1,4}\))+")  # "(b)(4)": a citation's paragraph, as a header names it


def _running_key(text: str) -> str:
    """A line as it repeats from page to page: numbers and paragraph paths ("21 CFR 820.35(a)(1)") left out."""
    return _PARAGRAPH_PATH.sub("(#)", re.sub(r"\d+", "#", " ".join(text.lower().split())))


def _outermost_running(fragments: list[Fragment], headers: set[int]) -> list[Fragment]:
    """The page's highest and lowest fragment when it is a running header found in other pages' edge zones, or a page
    number set a line apart, wherever the printer put it: above the edge zone, or lower on a landscape page. Read in
    page order, "ICH Q12 Guideline" was glued to a table row, and "3" to the sentence going on to the next page ("an
    outline of the 3 investigation")."""
    if len(fragments) < 2:
        return []
    lowest, highest = min(fragments, key=lambda f: f.bottom), max(fragments, key=lambda f: f.top)
    found: list[Fragment] = []
    for f, gap in ((lowest, min(g.bottom for g in fragments if g is not lowest) - lowest.top),
                   (highest, highest.bottom - max(g.top for g in fragments if g is not highest))):
        apart = _PAGE_NUMBER.match(f.text.strip()) and gap >= f.top - f.bottom
        if (id(f) in headers or apart) and not any(f is g for g in found):
            found.append(f)
    return found


STACKED_ROUNDS = 8
"""How many lines a running header or footer may stack beyond the edge zone, one on the next."""


def _running_lines(pages: list[RawPage]) -> set[int]:
    """Ids of fragments that are page numbers ("7", "Page 2 of 7", "... page 2 of 7") or headers/footers repeated
    across pages. A repeated line stacked on one (a footer of three lines whose first starts above the edge zone) is
    part of it, up to ``STACKED_ROUNDS`` lines away. Each fragment's key is made once and each round asks sorted
    arrays (``_stacked_on``): comparing every repeated line with every line found, round after round until none was
    added, cost the cube of a page's lines (800 repeated lines on two pages: 23 s of CPU, issue 54)."""
    keys = {id(f): _running_key(f.text) for page in pages for f in page.fragments}
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({keys[id(f)] for f in page.fragments})
    threshold = max(2, REPEAT_SHARE * len(pages))
    edge_found = [[f for f in page.fragments
                   if _edge(f, page) and (_PAGE_NUMBER.match(f.text.strip()) or _PAGE_OF.search(f.text)
                                          or seen[keys[id(f)]] >= threshold)] for page in pages]
    headers = {keys[id(f)] for found in edge_found for f in found
               if seen[keys[id(f)]] >= threshold and sum(map(str.isalpha, f.text)) >= 3}
    removed: set[int] = set()
    for page, found in zip(pages, edge_found, strict=True):
        found = found + _outermost_running(page.fragments, {id(f) for f in page.fragments if keys[id(f)] in headers})
        found_ids = {id(f) for f in found}
        rest = [f for f in page.fragments if seen[keys[id(f)]] >= threshold and id(f) not in found_ids]
        if rest:
            found += _stacked_on(found, rest)
        removed.update(id(f) for f in found)
    return removed


def _stacked_on(found: list[Fragment], rest: list[Fragment]) -> list[Fragment]:
    """The fragments of ``rest`` reached from ``found`` through fragments each right above or below the one before
    (less than a line's height between them: the taller one's, at least 1), in up to ``STACKED_ROUNDS`` steps.

    Each step is two look-ups per fragment in sorted arrays: ``f`` is near one found ``g`` when ``g`` is within
    ``f``'s reach ``r`` (``g.bottom < f.top + r`` and ``g.top > f.bottom - r``) or ``f`` within ``g``'s."""
    bottoms = np.array([f.bottom for f in rest], dtype=np.float64)
    tops = np.array([f.top for f in rest], dtype=np.float64)
    reach = np.maximum(tops - bottoms, 1.0)
    near_bottoms = np.array([g.bottom for g in found], dtype=np.float64)
    near_tops = np.array([g.top for g in found], dtype=np.float64)
    waiting = np.ones(len(rest), dtype=bool)
    for _ in range(STACKED_ROUNDS):
        if not len(near_bottoms) or not waiting.any():
            break
        near_reach = np.maximum(near_tops - near_bottoms, 1.0)
        order = np.argsort(near_bottoms, kind="stable")
        sorted_bottoms, top_max = near_bottoms[order], np.maximum.accumulate(near_tops[order])
        k = np.searchsorted(sorted_bottoms, tops + reach, side="left")  # found starting below f's reach upwards
        hit = (k > 0) & (top_max[np.maximum(k - 1, 0)] > bottoms - reach)  # ... one ending above it downwards
        order = np.argsort(near_bottoms - near_reach, kind="stable")
        sorted_starts = (near_bottoms - near_reach)[order]
        reach_max = np.maximum.accumulate((near_tops + near_reach)[order])
        k = np.searchsorted(sorted_starts, tops, side="left")  # found whose reach starts below f's top ...
        hit |= (k > 0) & (reach_max[np.maximum(k - 1, 0)] > bottoms)  # ... reaching above its bottom
        new = hit & waiting
        if not new.any():
            break
        waiting &= ~new
        near_bottoms, near_tops = bottoms[new], tops[new]  # only the fragments just found can reach more
    return [f for f, left in zip(rest, waiting, strict=True) if not left]


def _drop_line_numbers(fragments: list[Fragment]) -> list[Fragment]:
    """Strip margin line numbers: integers set apart from the text that count up down the page."""
    candidates = [f for f in fragments if f.lead_number is not None and f.lead_gap >= 8.0]
    numbers = [f.lead_number for f in candidates if f.lead_number is not None]  # every candidate has one
    rising = sum(b > a for a, b in pairwise(numbers))
    if len(candidates) < 5 or rising < 0.7 * (len(candidates) - 1):
        return fragments
    strip = {id(f) for f in candidates}
    kept = []
    for f in fragments:
        if id(f) in strip:
            rest = re.sub(r"^\d{1,4}\s*", "", f.text)
            if not rest:
                continue
            shift = len(f.text) - len(rest)
            f = Fragment(f.page, rest, max(f.x0, f.rest_x0), f.x1, f.bottom, f.top, f.size, f.bold,
                         marks=tuple((a - shift, b - shift) for a, b in f.marks if a >= shift))
        kept.append(f)
    return kept


_UNIT_BEFORE = re.compile(r"(?:^|\s)(?:[kcmdµμn]?m|ft|in)$")  # "25 m2": a power of a unit, not a footnote mark
_UNIT_REACH = 5  # more than _UNIT_BEFORE ever reads: a space, a unit of two letters and a line break
_MARK_ONLY = re.compile(r"\d{1,3}(?:,\d{1,3})*")


def _unmarked(f: Fragment) -> Fragment:
    """``f`` without its marks (``pdf.Fragment.marks``): footnote marks set superscript after a word or a sign
    ("resources8 to", "approval.9", "face-to-face,62") or opening a footnote, and margin line numbers pdfium put
    inside the line. What a reader reads as the sentence is left; a footnote keeps its text, in a chunk of its own.
    A power of a unit ("25 m2") stays.

    Linear in the fragment: the text kept is gathered in pieces and only its last few characters are read before
    each mark (cutting and searching the whole text before every mark cost 6 s of CPU for one crafted line of
    24,900 marks, issue 54)."""
    if not f.marks:
        return f
    kept: list[str] = []
    tail, length, done = "", 0, 0  # the last characters kept, how many were kept, where the text not kept starts
    for start, end in f.marks:
        if start < done:
            continue  # overlaps a mark already cut
        before = f.text[done:start]
        kept.append(before)
        tail, length, done = (tail + before[-(_UNIT_REACH + 1):])[-(_UNIT_REACH + 1):], length + len(before), start
        # ``^`` is the text's start only while all of it is in the tail; else the tail's first character is padding
        if not _UNIT_BEFORE.search(tail, 0 if length <= _UNIT_REACH else 1):
            done = end
    kept.append(f.text[done:])
    text = re.sub(r" {2,}", " ", "".join(kept)).strip()
    return Fragment(f.page, text, f.x0, f.x1, f.bottom, f.top, f.size, f.bold, f.lead_number, f.lead_gap,
                    rest_x0=f.rest_x0)


def _footnote_marks(fragments: list[Fragment]) -> set[int]:
    """The numbers a page's text marks as footnotes: its marks that follow text (not a footnote's own number)."""
    return {int(n) for f in fragments for a, b in f.marks if a > 0 for n in f.text[a:b].split(",") if n.isdigit()}


def _mark_footnotes(lines: list[_Line], marks: set[int], body_size: float, height: float) -> None:
    """The page's footnotes, from the first line in its lower half that opens with a number the text above marked
    and is set smaller than the body, down to the page's end. Footnotes set only a little smaller than the body
    (0.86 of it in a corpus PDF) are not told apart by size alone; their numbers tell them."""
    start = next((line for line in lines if line.top < height / 2 and line.size < 0.97 * body_size
                  and line.opens in marks), None)
    if start is None:
        return
    for line in lines:
        if line.top <= start.top + 0.5 * (start.top - start.bottom):
            line.note = True


def _raised_alone(f: Fragment, line: _Line) -> bool:
    """A fragment that is only a footnote mark, set smaller and higher than the line it sits on ("51,52")."""
    return (bool(_MARK_ONLY.fullmatch(f.text)) and line.size > 0 and f.size < 0.8 * line.size
            and f.bottom > line.bottom + 0.15 * line.size)


def _visual_lines(fragments: list[Fragment]) -> list[_Line]:
    """Merge fragments that pdfium emitted one after another on the same visual line (superscripts, margins)."""
    fragments = [u for u in map(_unmarked, fragments) if u.text]
    lines: list[_Line] = []
    for f in fragments:
        last = lines[-1] if lines else None
        if last is not None and _same_line(last, f):
            last.fragments.append(f)
            last.bottom, last.top = min(last.bottom, f.bottom), max(last.top, f.top)
            if f.size > last.size:
                last.size, last.bold = f.size, f.bold
        else:
            lines.append(_Line(f.page, "", f.x0, f.bottom, f.top, f.size, f.bold, fragments=[f]))
    for line in lines:
        if len(line.fragments) == 1:  # most lines: what follows leaves one fragment as it is
            only = line.fragments[0]
            line.opens, line.x0, line.text = only.lead_number, only.x0, only.text
            continue
        line.opens = min(line.fragments, key=lambda f: f.x0).lead_number
        line.fragments = [f for f in line.fragments if not _raised_alone(f, line)] or line.fragments
        parts = sorted(line.fragments, key=lambda f: f.x0)
        gaps = [b.x0 - a.x1 for a, b in pairwise(parts)]
        line.table = len(parts) >= 2 and any(g > CELL_GAP * max(line.size, 1.0) for g in gaps)
        line.x0 = parts[0].x0
        line.text = (" | " if line.table else " ").join(p.text for p in parts)
        if line.table:  # cells: the fragments between wide gaps (a superscript stays with its word)
            cells = [(parts[0].x0, [parts[0].text], parts[0].bold)]
            for gap, part in zip(gaps, parts[1:], strict=True):
                if gap > CELL_GAP * max(line.size, 1.0):
                    cells.append((part.x0, [part.text], part.bold))
                else:
                    cells[-1][1].append(part.text)
            line.cells = [(x0, " ".join(texts), bold) for x0, texts, bold in cells]
            if len(line.cells) == 2 and _SECTION_NO.fullmatch(line.cells[0][1]):  # "6.<tab>DOCUMENTATION AND ..."
                line.table, line.cells, line.text = False, [], " ".join(p.text for p in parts)
    return lines


def _stacked_order(lines: list[_Line], height: float) -> list[_Line]:
    """A page's lines top to bottom when no two of its body's lines share a height (one column), else in the stream's
    order.

    Some printers draw a page's pieces out of order: the eCFR's print drew a table, then "§ 820.35 Control of
    records." with its lead-in, then the paragraphs above them, so the lead-in was read with another paragraph's
    list. Columns, table cells drawn apart and side boxes share heights with other lines, and keep the stream's
    order; a running header's left and right parts (in the edge zones) do not count."""
    ordered = sorted(lines, key=lambda line: -line.top)
    body = [line for line in ordered if height * EDGE_ZONE < line.bottom and line.top < height * (1 - EDGE_ZONE)]
    for upper, lower in pairwise(body):
        if lower.top - max(upper.bottom, lower.bottom) > 0.25 * min(upper.top - upper.bottom, lower.top - lower.bottom):
            return lines
    return ordered


def _same_line(line: _Line, f: Fragment) -> bool:
    if f.top <= f.bottom or line.top <= line.bottom:
        return False
    overlap = min(line.top, f.top) - max(line.bottom, f.bottom)
    return overlap > 0.5 * min(line.top - line.bottom, f.top - f.bottom)


# --- structure ---------------------------------------------------------------------------------------------


def _body_style(lines: list[_Line]) -> tuple[float, bool]:
    sizes: Counter[float] = Counter()
    bold: Counter[bool] = Counter()
    for line in lines:
        sizes[round(line.size, 1)] += len(line.text)
        bold[line.bold] += len(line.text)
    return (sizes.most_common(1)[0][0] if sizes else 0.0), (bold.most_common(1)[0][0] if bold else False)


def _is_heading(line: _Line, body_size: float, body_bold: bool) -> bool:
    text = line.text.strip()
    letters = "".join(filter(str.isalpha, text))
    if not 3 <= len(text) <= 150 or len(letters) < 3 or _TOC_LEADER.search(text) or line.table:
        return False
    if text[:1] in _BULLET_SIGNS:  # a bold list item is no heading: its lead-in and its list stay one section
        return False
    if text[:1].islower():  # the rest of a sentence, or a list item ("o ...", "a. ..."), set in a heading's type
        return False
    if text.endswith((",", ";")) or (text.endswith(".") and not _NUMBERED_HEADING.match(text) and len(text) > 60):
        return False
    larger = body_size > 0 and line.size >= body_size * 1.15
    emphasised = line.bold and not body_bold
    upper = sum(map(str.isupper, letters)) / len(letters) > 0.8
    numbered = bool(_NUMBERED_HEADING.match(text)) and not text.endswith(".")
    return larger or (emphasised and len(text) <= 120) or (numbered and (upper or line.bold)) or (
        upper and len(text) <= 80 and len(letters) >= 6)


def _hyphenated_words(lines: list[_Line]) -> set[str]:
    """Hyphenated compounds written inside lines (``long-term``): such a hyphen at a line end is kept."""
    return {m.group(0).lower() for line in lines for m in _HYPHENATED.finditer(line.text)}


_HEAD_REACH = 64
"""The longest first word of a compound looked up when a line ends in its hyphen: a longer run of letters is no word
(it is joined without the hyphen)."""
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class _Text:
    """A block's text, built line by line in linear time: its pieces are joined once, at the end, and a join reads
    only the characters at the text's end (a hyphen and the word before it). Appending to the whole text and
    searching all of it for the hyphenated word at every line was quadratic in a block's lines."""

    _REACH = _HEAD_REACH + 2  # the word, the hyphen, and one character more to see where the word starts

    def __init__(self, text: str) -> None:
        self.parts, self.length, self.tail = [text], len(text), text[-self._REACH:]

    def _add(self, piece: str) -> None:
        self.parts.append(piece)
        self.length += len(piece)
        self.tail = (self.tail + piece[-self._REACH:])[-self._REACH:]

    def add_row(self, line: str) -> None:
        self._add("\n")
        self._add(line)

    def join(self, line: str, hyphenated: set[str]) -> None:
        """``line`` after the text: a word hyphenated at the line's end is joined (its hyphen kept when the document
        writes the compound inside a line, ``_hyphenated_words``), else a space between."""
        if not self.length:
            self._add(line)
            return
        before = self.tail[:-1]
        head = len(before) - len(before.rstrip(_LETTERS))  # letters right before the text's last character
        if not (self.tail[-1] in "-\u00ad" and line[:1].islower() and head):
            self._add(" ")
            self._add(line)
            return
        word = before[-head:] if head < len(before) or self.length - 1 == len(before) else None  # None: too long
        tail = re.match(r"[A-Za-z]+", line)
        compound = f"{word}-{tail.group(0)}".lower() if tail and word is not None else ""
        while not self.parts[-1]:
            self.parts.pop()
        self.parts[-1] = self.parts[-1][:-1]  # the hyphen
        self.length -= 1
        self.tail = self.tail[:-1]
        if compound in hyphenated:
            self._add("-")
        self._add(line)

    def text(self) -> str:
        whole = "".join(self.parts)
        self.parts = [whole]
        return whole


_ALIGN = 3.0  # points: a line starting this close to a column's start is in that column


class _Table:
    """A table's rows, built line by line: a row of cells (``_Line.cells``) opens a row; a line of one cell set
    under a later column (a cell's text wrapped), or under the first in lower case, adds to the row above. Its text
    is one line per row, each cell after its column's header when the first row is set in bold ("Test: Assay |
    Limit: 95-105 %."), else "key: value." for two columns and "a | b | c." for more, ending in a full stop: a row is
    one unit (" | " ends no sentence, where ";" would), a cell of whole sentences its own, and no row runs into the
    next. Linear in the table's cells."""

    def __init__(self, line: _Line) -> None:
        self.starts: list[float] = []  # each column's start, in the order found
        self.keys: dict[int, int] = {}  # a start rounded to ``_ALIGN`` → its column: found in constant time
        self.rows: list[dict[int, list[str]]] = []
        self.first = 0  # the leftmost column
        self.bold_head = all(bold for _, _, bold in line.cells)
        self.add(line)

    def _found(self, x0: float) -> int | None:
        key = round(x0 / _ALIGN)
        for k in (key, key - 1, key + 1):
            if k in self.keys and abs(self.starts[self.keys[k]] - x0) <= _ALIGN:
                return self.keys[k]
        return None

    def _column(self, x0: float) -> int:
        """The column whose start ``x0`` is at, a new one when none is."""
        found = self._found(x0)
        if found is None:
            found = len(self.starts)
            self.starts.append(x0)
            self.keys.setdefault(round(x0 / _ALIGN), found)
            if x0 < self.starts[self.first]:
                self.first = found
        return found

    def takes(self, line: _Line) -> bool:
        """A line of one cell that belongs to the table: it starts where a column does."""
        return self._found(line.x0) is not None

    def add(self, line: _Line) -> None:
        if line.cells:
            row: dict[int, list[str]] = {}
            for x0, text, _ in line.cells:
                row.setdefault(self._column(x0), []).append(text)
            self.rows.append(row)
            return
        column = self._column(line.x0)
        if not self.rows or (column == self.first and not line.text[:1].islower()):
            self.rows.append({column: [line.text]})
        else:
            self.rows[-1].setdefault(column, []).append(line.text)

    def text(self) -> str:
        cells = [{c: " ".join(parts) for c, parts in sorted(row.items(), key=lambda item: self.starts[item[0]])}
                 for row in self.rows]
        head = cells[0] if self.bold_head and len(cells) > 1 else None
        out = []
        for row in cells[1:] if head else cells:
            values = [(c, v.rstrip(" ;")) for c, v in row.items()]
            if head:
                said = [f"{head[c]}: {v}" if _names_column(head.get(c)) else v for c, v in values]
            elif len(values) == 2:
                said = [f"{values[0][1].rstrip(':')}: {values[1][1]}"]
            else:
                said = [v for _, v in values]
            text = said[0]
            for value in said[1:]:  # a cell that ends a sentence ends its unit ("... fractures. Annotations: ...")
                text += (" " if text.endswith((".", "!", "?")) else " | ") + value
            out.append(text if text.endswith((".", ";", ":", "?", "!")) else f"{text}.")
        return "\n".join(out)


def _names_column(head: str | None) -> bool:
    """A head cell that names its column; a chapter's number set beside its first page ("8.") names none."""
    return head is not None and any(c.isalpha() for c in head)


def _kind(line: _Line, body_size: float, body_bold: bool) -> str:
    if line.note:
        return "note"
    if _is_heading(line, body_size, body_bold):
        return "heading"
    if line.table:
        return "table"
    if body_size and line.size < body_size * 0.85:
        return "note"
    if _BULLET.match(line.text):
        return "list"
    return "text"


def _blocks(lines: list[_Line], body_size: float, body_bold: bool, hyphenated: set[str]) -> list[Block]:
    blocks: list[Block] = []
    section: str | None = None
    previous: _Line | None = None
    building: _Text | None = None  # the text of ``blocks[-1]``, set when the next block starts
    grown_heading = False  # ``blocks[-1]`` is a heading of more than one line: the section is all of its text

    table: _Table | None = None  # the rows of ``blocks[-1]`` when it is a table

    def close() -> None:
        nonlocal section
        if table is not None:
            blocks[-1].text = table.text()
        elif building is not None:
            blocks[-1].text = building.text()
            if grown_heading:
                section = blocks[-1].section = blocks[-1].text

    for line in lines:
        kind = _kind(line, body_size, body_bold)
        current = blocks[-1] if blocks else None
        gap = (previous.bottom - line.top) if previous is not None else 0.0
        if (table is not None and current is not None and current.kind == "table" and current.page == line.page
                and not line.note and gap < 1.5 * max(line.size, 1.0) and (line.table or table.takes(line))):
            table.add(line)  # a row, or a cell's text wrapped onto a line of its own
            previous = line
            continue
        continues = (
            current is not None and previous is not None and current.page == line.page
            and gap < (1.5 if kind == "heading" else 0.8) * max(line.size, 1.0)
            and (kind == current.kind or (current.kind == "list" and kind == "text"))
            and not (kind == "list" and current.kind == "list" and _BULLET.match(line.text))
            and not (kind == "heading" and _NUMBERED_HEADING.match(line.text))
            and not (kind != "heading" and _ends_short(previous, line) and _heading_so_far(building))
        )
        if continues:
            assert building is not None  # continues only with a current block
            if kind == "table":
                building.add_row(line.text)
            else:
                building.join(line.text, hyphenated)
            grown_heading = grown_heading or kind == "heading"
        else:
            close()
            if kind == "heading":
                section = line.text.strip()
            blocks.append(Block(line.page, line.text.strip(), kind, section))
            building, grown_heading = _Text(blocks[-1].text), False
            table = _Table(line) if kind == "table" else None
        previous = line
    close()
    return blocks


SHORT_LINE = 0.2
"""A line that stops this share of the next line's width before the next line's end has ended its block."""


def _ends_short(line: _Line, after: _Line) -> bool:
    """``line`` ends its block though no full stop ends it: it stops well short of ``after``, which opens with a
    capital. A paragraph's line runs to the margin unless the paragraph ends there, so ``line`` is a run-in heading
    set on a line of its own in body type ("a. Over-encapsulation of clinical trial formulations" / "Blinding of
    drug products ..."), or the last line of one ("1. Basis of Submission ... the Same as" / "its RLD")."""
    if line.text.rstrip().endswith((".", ":", ";", "?", "!", ",")) or not after.text[:1].isupper():
        return False
    end, after_end = (max(f.x1 for f in x.fragments) for x in (line, after))
    return end < after_end - SHORT_LINE * (after_end - after.x0)


_MARKER = re.compile(r"^\(?[A-Za-z0-9]{1,3}(?:\.[A-Za-z0-9]{1,3})*[.)]\s+")
_CLAUSE_END = re.compile(r"[,.:;?!]\s")


def _heading_so_far(building: _Text | None) -> bool:
    """The block's text so far reads as a heading (``set_apart``, and no clause ends inside it after its number): a
    lead-in and the list items printed after it without full stops stay one block, and so does a sentence whose
    line ends short ("... the Center for Drug Evaluation and" / "Research ...")."""
    if building is None or building.length > _MAX_HEADING_CHARS:
        return False
    text = building.text()
    return set_apart(text) and not _CLAUSE_END.search(_MARKER.sub("", text))


_MAX_HEADING_CHARS = 250


# --- pass 2 ------------------------------------------------------------------------------------------------


def _alnum(text: str) -> int:
    return sum(map(str.isalnum, text))  # map over a C method: no generator frame per character


def _reconcile(pages: list[RawPage], blocks: list[Block], dropped: dict[int, int]) -> list[Block]:
    """Add a page-level block for any page whose text pass 1 did not capture well enough.

    Coverage counts letters and digits, so joined hyphenations and rebuilt lines do not count as losses.
    """
    by_page: dict[int, list[Block]] = {}
    for block in blocks:
        by_page.setdefault(block.page, []).append(block)
    out: list[Block] = []
    section: str | None = None
    for page in pages:
        page_blocks = by_page.get(page.number, [])
        out.extend(page_blocks)
        expected = _alnum(page.text) - dropped.get(page.number, 0)
        kept = sum(_alnum(b.text) for b in page_blocks)
        if expected > 0 and kept / expected < MIN_COVERAGE:
            out.append(Block(page.number, " ".join(page.text.split()), "page", section))
        if page_blocks:
            section = page_blocks[-1].section
    return out
