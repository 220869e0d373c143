"""Blocks → child chunks (~800 chars, searched) grouped under parents (~3000 chars, context).

A child never crosses a section, and starts on the page it names. Blocks are
packed whole when they fit: list items and table rows stay together; only a
block longer than a child is cut, at sentence (or, for tables, row)
boundaries. A child that would end mid-sentence at a block boundary keeps the
rest of that sentence, on the same page or, at a page break, from the top of
the next page (the only text a child holds from another page). Footnotes and
page-level reconciliation blocks get chunks of their own, never folded into
the body text, so they neither dilute its embeddings nor land inside its
sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.text_units import ABBREVIATIONS, BULLET_SIGNS
from .layout import Block

CHILD_CHARS = 800
PARENT_CHARS = 3000
SMALL_BLOCK = 150  # a block this short may stretch a child to OVERFLOW × CHILD_CHARS rather than stand alone
OVERFLOW = 1.25
TABLE_WHOLE = 1.5  # a table up to this × CHILD_CHARS stays one chunk
_SEPARATE_KINDS = {"note", "page"}


@dataclass(frozen=True)
class Piece:
    page: int
    text: str
    section: str | None = None
    kind: str = "text"


def _pack(pieces: list[str], current: str, part: str, limit: int, sep: str) -> str:
    """``part`` joined to the piece being filled (by ``sep``), or that piece closed into ``pieces`` when ``part``
    would take it past ``limit``; returns the piece being filled."""
    if current and len(current) + 1 + len(part) > limit:
        pieces.append(current)
        return part
    return f"{current}{sep}{part}".strip()


def _split(text: str, limit: int) -> list[str]:
    """Greedy split at sentence, then word boundaries; pieces never exceed ``limit`` (unless one word does)."""
    sentences = re.split(r"(?<=[.!?;:])\s+", " ".join(text.split()))
    pieces, current = [], ""
    for sentence in sentences:
        while len(sentence) > limit:  # a run-on "sentence" (tables, lists): cut at a word boundary
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            if current:
                pieces.append(current)
                current = ""
            pieces.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        current = _pack(pieces, current, sentence, limit, " ")
    if current:
        pieces.append(current)
    return [p for p in pieces if p]


def _split_rows(text: str, limit: int) -> list[str]:
    """Cut a table between rows; a row longer than ``limit`` is cut like prose."""
    pieces: list[str] = []
    current = ""
    for row in text.split("\n"):
        for part in _split(row, limit) if len(row) > limit else [row.strip()]:
            current = _pack(pieces, current, part, limit, "\n")
    if current:
        pieces.append(current)
    return pieces


def _block_parts(block: Block) -> list[str]:
    if block.kind == "table":
        return [block.text] if len(block.text) <= TABLE_WHOLE * CHILD_CHARS else _split_rows(block.text, CHILD_CHARS)
    text = " ".join(block.text.split())
    return [text] if len(text) <= CHILD_CHARS else _split(text, CHILD_CHARS)


def child_pieces_from_blocks(blocks: list[Block]) -> list[Piece]:
    """Pack blocks into child-sized pieces in reading order."""
    pieces: list[Piece] = []
    current: list[str] = []
    key: tuple[int, str | None, str] | None = None  # (page, section, kind) of the piece being filled
    size = 0

    def flush() -> None:
        nonlocal current, size
        if current:
            assert key is not None  # set before the first part is added
            page, section, kind = key
            pieces.append(Piece(page, "\n".join(current), section, kind))
        current, size = [], 0

    for block in blocks:
        kind = block.kind if block.kind in _SEPARATE_KINDS else "text"
        for part in _block_parts(block):
            part_key = (block.page, block.section, kind)
            fits = size + len(part) + 1 <= CHILD_CHARS or (
                len(part) < SMALL_BLOCK and size + len(part) + 1 <= OVERFLOW * CHILD_CHARS)
            if part_key != key or not fits:
                lead_in = ""
                if key is not None and part_key[0] == key[0]:  # a sentence a block boundary cut, on one page
                    ending, part = _sentence_end(current, part)
                    if ending:
                        current[-1:] = [current[-1] + ending] if _cut_word(current[-1]) else [current[-1], ending]
                    lead_in = _trailing_lead_in(current) if part_key == key else ""
                flush()
                if lead_in:  # a lead-in goes with the list it announces, not at the end of the child before
                    current, size = [lead_in], len(lead_in) + 1
                key = part_key
                if not part:
                    continue
            current.append(part)
            size += len(part) + 1
    flush()
    return _lead_ins_forward(_absorb_small(_across_pages(pieces)))


def _trailing_lead_in(current: list[str]) -> str:
    """The last sentence of the child being closed when it announces a list (ends in ":"), taken off that child;
    "" when there is none, or when it is all the child holds. A lead-in quoted without its items is a fragment
    ("... may be rescheduled if:"); in the next child it stays with them."""
    if len(current) < 2 or not current[-1].rstrip().endswith(":"):
        last = current[-1] if current else ""
        head, sep, tail = last.rstrip().rpartition(". ")
        if not (sep and tail.endswith(":") and tail[:1].isupper() and len(tail) < CHILD_CHARS / 4):
            return ""
        current[-1] = head + "."
        return tail
    if len(current[-1]) >= CHILD_CHARS / 2:  # a long paragraph ending in a lead-in: its last sentence goes
        head, sep, tail = current[-1].rstrip().rpartition(". ")
        if not (sep and tail[:1].isupper() and len(tail) < CHILD_CHARS / 4):
            return ""
        current[-1] = head + "."
        return tail
    return current.pop()


_OPEN_END = re.compile(r"[A-Za-z0-9,(-]$")  # a piece that stops inside a sentence
_CONTINUATION = re.compile(r"^[a-z]")  # not "(": "(4) As applicable, ..." is a list item, not the rest of a sentence
# At a page break the rest may open with a figure ("... under 21 CFR" | "314.94(a)(8) ..."), not with a list number,
# or with a bracket around words ("... in vivo BE testing" | "(bio-batch) and supported by ..."), not a list marker.
# Bounded repeats: an inline document is read whole, and "\d+...\S*\s+" backtracks quadratically on a run of digits.
_PAGE_CONTINUATION = re.compile(r"^(?:[a-z]|\d{1,12}(?:\.\d{1,12})+\b|\d{1,12}(?![.)]\s)\S{0,80}\s+[a-z]"
                                r"|\((?!(?:[a-z]{1,2}|[ivx]{1,4}|\d{1,3})\))[a-z])")
_END = re.compile(r"[.!?;:](?=\s|$)")


def _first_sentence(text: str) -> str:
    """``text`` up to its first sentence end (., !, ?, ; or : before a space) that is no abbreviation's ("i.e.",
    "U.S."), within half a child; "" when there is none."""
    for found in _END.finditer(text, 0, CHILD_CHARS // 2):
        head = text[:found.end()]
        if not head.endswith(ABBREVIATIONS):
            return head if found.end() == len(text) or text[found.end()].isspace() else ""
    return ""


def _sentence_end(current: list[str], part: str, page_turn: bool = False) -> tuple[str, str]:
    """When the piece being closed stops mid-sentence and ``part`` carries on with that sentence ("... reported to
    FDA" | "only in the IND annual report. ..."), the rest of the sentence, to go with the piece, and what is left
    of ``part``; else ``("", part)``. A sentence split between two chunks is quoted by neither whole. The rest may
    open with a capital when it closes a quotation the piece left open, and at a page turn after a comma; it may
    open with a figure at a page turn."""
    if not current or not _OPEN_END.search(current[-1]):
        return "", part
    last = current[-1]
    if not ((_PAGE_CONTINUATION if page_turn else _CONTINUATION).match(part) or _hangs(last, part)
            or _closes_its_quotation(last, part) or (page_turn and _after_a_comma(last, part))):
        return "", part
    first = _first_sentence(part)
    if not first:
        return "", part
    return first, part[len(first):].strip()


def _after_a_comma(text: str, part: str) -> bool:
    """The next page's body opens with the rest of a sentence the page left at a comma ("When an approved drug product
    is not marketed," | "FDA moves ..."). Footnotes are pieces of their own, so the body does go on."""
    return text.endswith(",") and part[:1].isupper() and not _LIST_ITEM.match(part)


def _closes_its_quotation(text: str, part: str) -> bool:
    """``part`` closes a quotation the last sentence of ``text`` left open ("... should be “Returned by Accomplishing"
    | "Organization” in FACTS ...")."""
    tail, first = text[-CHILD_CHARS // 2:].rsplit(". ", 1)[-1], part[:CHILD_CHARS // 2].split(". ", 1)[0]
    return tail.count("\u201c") > tail.count("\u201d") and first.count("\u201d") > first.count("\u201c")


def _joined(text: str, rest: str) -> str:
    """``text`` and the rest of its last sentence, on a line of their own; a word cut at its hyphen is joined whole
    ("pre-" + "BLA)" → "pre-BLA)")."""
    return f"{text}{rest}" if _cut_word(text) else f"{text}\n{rest}"


def _cut_word(text: str) -> bool:
    return text.endswith("-") and not text.endswith(" -")


_ACRONYM_START = re.compile(r"^[A-Z]{2,}[),;\s]")


def _hangs(text: str, part: str) -> bool:
    """A word cut at its hyphen, whose rest is an acronym: "... license application (pre-" | "BLA) meetings". (Any
    capital after a hyphen is no such sign: the next piece may be a footnote, "... and Question-" | "See, e.g., ...";
    nor is a bracket left open: "... within plus or" | "21 CFR 320.22(a).")"""
    return _cut_word(text) and bool(_ACRONYM_START.match(part))


def _across_pages(pieces: list[Piece]) -> list[Piece]:
    """A sentence a page break cut: the last body piece of a page stops mid-sentence and the next page's body opens
    with its rest ("... must submit a citizen petition under 21 CFR" | "10.30 ..."). The rest, up to its first
    sentence end, moves to the piece it belongs to, so each page's piece holds whole sentences; the piece keeps the
    page where the sentence starts, except a lead-in the page cut: it goes whole to its list on the next page
    ("... such investigation. For" | "complaints that must be reported ... the following information:\n(1) ..."),
    and the piece there keeps its page. Footnotes between the two stay where they are."""
    out = list(pieces)
    # After each piece, where the page turns and where the next body piece is: found once, from the end (looking
    # ahead from every piece was quadratic in a page's pieces: an inline document is one page). Pages and kinds
    # stay as they are below, only texts move.
    turns, texts = [len(out)] * len(out), [len(out)] * len(out)
    for i in range(len(out) - 2, -1, -1):
        turns[i] = i + 1 if out[i + 1].page != out[i].page else turns[i + 1]
        texts[i] = i + 1 if out[i + 1].kind == "text" else texts[i + 1]
    for i, piece in enumerate(out):
        if piece.kind != "text" or i + 1 >= len(out):
            continue
        turn = turns[i]
        if turn == len(out) or texts[i] < turn:
            continue  # not the page's last body piece
        nxt = out[turn]
        if nxt.kind != "text" or nxt.page != piece.page + 1 or nxt.section != piece.section:
            continue
        ending, rest = _sentence_end([piece.text.rsplit("\n", 1)[-1]], nxt.text, page_turn=True)
        at = _last_sentence_at(piece.text) if ending.rstrip().endswith(":") else None
        if at is not None and len(piece.text) - at + len(nxt.text) <= OVERFLOW * CHILD_CHARS:
            # the page cut a lead-in: its start goes to its list, on the page most of it is on
            out[i] = Piece(piece.page, piece.text[:at].rstrip(), piece.section, piece.kind)
            out[turn] = Piece(nxt.page, _joined(piece.text[at:].strip(), nxt.text), nxt.section, nxt.kind)
            continue
        if not ending and piece.text.rstrip().endswith(":"):
            ending, rest = _list_items(nxt.text)
            first = "" if ending else _first_sentence(nxt.text)
            if first and not first.rstrip().endswith(":"):  # no list marker: the first item is the next page's
                ending, rest = first, nxt.text[len(first):].strip()  # first sentence (a lead-in stays with its list)
        if ending:
            out[i] = Piece(piece.page, _joined(piece.text, ending), piece.section, piece.kind)
            out[turn] = Piece(nxt.page, rest, nxt.section, nxt.kind)
    return [p for p in out if p.text]


_LONE_MARKS = " \n·" + BULLET_SIGNS
_LAST_SENTENCE = re.compile(r"(?:^|\n|(?<=[.!?;])\s+)(?=\S)")


def _last_sentence_at(text: str) -> int | None:
    """Where the text's last sentence starts, when it starts in its last ``CHILD_CHARS / 2`` characters (a capital, or
    the text's start); None when it is longer: a paragraph, not a lead-in."""
    starts = [m.start() for m in _LAST_SENTENCE.finditer(text, max(0, len(text) - CHILD_CHARS // 2))]
    return next((s for s in reversed(starts) if text[s:].strip()[:1].isupper() or s == 0), None)


def _lead_ins_forward(pieces: list[Piece]) -> list[Piece]:
    """A body piece that still ends in a lead-in ("... include the following:") when the next piece, its list, is
    body text on the same page and section: the lead-in moves to the head of the next piece (the whole piece when
    it is only the lead-in). The pieces before ran out of room before the list (``_trailing_lead_in`` only sees
    the blocks being packed; ``_absorb_small`` and the page's end come after it). Reads the last
    ``CHILD_CHARS / 2`` characters of each piece: linear."""
    out = list(pieces)
    for i in range(len(out) - 1):
        piece, nxt = out[i], out[i + 1]
        if (piece.kind != "text" or nxt.kind != "text" or nxt.page != piece.page or nxt.section != piece.section
                or not piece.text.rstrip(_LONE_MARKS).endswith(":")):
            continue  # (a list's bullets set apart from their items may follow the lead-in: "reasons:\n•\n•")
        at = _last_sentence_at(piece.text)
        if at is None:
            continue  # the lead-in is longer than half a child: a paragraph, not a lead-in
        lead_in, head = piece.text[at:].strip(), piece.text[:at].rstrip()
        out[i] = Piece(piece.page, head, piece.section, piece.kind)
        out[i + 1] = Piece(nxt.page, f"{lead_in}\n{nxt.text}", nxt.section, nxt.kind)
    return [p for p in out if p.text]


_LIST_ITEM = re.compile(r"^(?:[o·\-–" + BULLET_SIGNS + r"]\s|\(?(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)]\s)")


def _list_items(text: str) -> tuple[str, str]:
    """The list items a page opens with, after a lead-in that closed the page before ("... include the following:"
    | "• ..."): they go with their lead-in (up to half a child), the rest stays; ``("", text)`` when the page opens
    with none."""
    lines = text.split("\n")
    taken: list[str] = []
    for line in lines:
        if not _LIST_ITEM.match(line) or sum(map(len, taken)) + len(line) > CHILD_CHARS / 2:
            break
        taken.append(line)
    return "\n".join(taken), "\n".join(lines[len(taken):]).strip()


def _absorb_small(pieces: list[Piece]) -> list[Piece]:
    """Fold a piece shorter than SMALL_BLOCK into a neighbour of its kind on the same page (the next one first: a
    short piece is usually a heading or lead-in), so stray lines do not become chunks of their own. A footnote is
    never folded into body text: its sentence would run into the body's."""
    out: list[Piece] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        if len(piece.text) < SMALL_BLOCK:
            if (nxt is not None and nxt.page == piece.page and nxt.kind == piece.kind
                    and len(piece.text) + len(nxt.text) < OVERFLOW * CHILD_CHARS):
                pieces[i + 1] = Piece(nxt.page, f"{piece.text}\n{nxt.text}", nxt.section, nxt.kind)
                i += 1
                continue
            prev = out[-1] if out else None
            if (prev is not None and prev.page == piece.page and prev.kind == piece.kind
                    and len(prev.text) + len(piece.text) < OVERFLOW * CHILD_CHARS):
                out[-1] = Piece(prev.page, f"{prev.text}\n{piece.text}", prev.section, prev.kind)
                i += 1
                continue
        out.append(piece)
        i += 1
    return out


def group_parents(children: list[Piece]) -> list[list[int]]:
    """Consecutive children grouped into parents of about PARENT_CHARS; a new section starts a new parent
    once the current one holds half its size. Returns child indexes per parent."""
    groups: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i, child in enumerate(children):
        new_section = current and child.section != children[current[-1]].section and size >= PARENT_CHARS / 2
        if current and (size + len(child.text) > PARENT_CHARS or new_section):
            groups.append(current)
            current, size = [], 0
        current.append(i)
        size += len(child.text) + 1
    if current:
        groups.append(current)
    return groups
