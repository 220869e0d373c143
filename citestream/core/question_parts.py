"""The parts a question asks for: "which tests, and how often", "water, meals and alcohol", "IR vs MR".

A question that coordinates several things asks for each of them; one unit rarely states them all. The parts are
read from the asking sentence's coordination ("and", "or", "vs", and a comma series ending in one of them), and
each part is known by the content terms only it names and the value it asks for. An answer covers a part when a
quoted unit names one of those terms or holds that value; the extractive backend quotes, beside its best unit, the
best unit for each part left uncovered, and the asked-slot check reads every part's slot. Linear in the question:
splits and set differences, no pattern that can backtrack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .slots import asked_slot, fills
from .text_units import matching_terms

_CONJUNCTION = re.compile(r",?\s+(?:and|or|vs\.?|versus)\s+")
MAX_PARTS = 4
SERIES_ITEM_WORDS = 3  # "water, meals and alcohol": a comma series' items are short
_OPEN_SLOTS = frozenset({"open", "yes_no", "definition", "list", "requirement"})


@dataclass(frozen=True)
class Part:
    terms: frozenset[str]  # the content terms only this part names
    slot: str              # the value it asks for (``slots.asked_slot`` of its own words)

    def covered_by(self, text: str) -> bool:
        return bool(self.terms & matching_terms(text)) or (self.slot not in _OPEN_SLOTS and fills(self.slot, text))


_WH = re.compile(r"^(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


def _name_word(word: str) -> bool:
    """A capitalised word that is not an acronym: "Food and Drug" is a name, "IR vs MR" two things."""
    return word[:1].isupper() and not word.isupper()


def _pieces(sentence: str) -> list[str]:
    """The coordinated pieces of a sentence: split at a conjunction, except between two capitalised words ("Food
    and Drug Administration" is a name), and the piece before the first one at the commas of a series whose items
    are short and open no clause of their own ("In ICH Q11 Example 1, what ..." is no series)."""
    pieces, start = [], 0
    for m in _CONJUNCTION.finditer(sentence):
        before, after = sentence[:m.start()].split()[-1:], sentence[m.end():].split()[:1]
        if before and after and _name_word(before[0]) and _name_word(after[0]):
            continue
        pieces.append(sentence[start:m.start()])
        start = m.end()
    pieces.append(sentence[start:])
    if len(pieces) > 1:
        series = [s.strip() for s in pieces[0].split(",")]
        if len(series) > 1 and all(len(s.split()) <= SERIES_ITEM_WORDS and not _WH.match(s) for s in series[1:]):
            pieces = [*series, *pieces[1:]]
    return [p for p in (p.strip() for p in pieces) if p]


@lru_cache(maxsize=4096)
def parts(asked: str) -> tuple[Part, ...]:
    """Each coordinated part of the last asking sentence; () when the question asks for one thing (no
    coordination, or a piece that names nothing of its own)."""
    sentences = [s for s in re.split(r"(?<=\?)\s+", asked.strip()) if s]
    if not sentences:
        return ()
    pieces = _pieces(sentences[-1][:2000])
    if not 2 <= len(pieces) <= MAX_PARTS:
        return ()
    terms = [matching_terms(p) for p in pieces]
    own = [frozenset(t - frozenset().union(*(o for j, o in enumerate(terms) if j != i))) for i, t in enumerate(terms)]
    if not all(own):
        return ()
    whole = asked_slot(asked)
    return tuple(Part(o, _slot_of(p, whole)) for o, p in zip(own, pieces))


def _slot_of(piece: str, whole: str) -> str:
    """A piece's own slot when it opens with a wh-word of its own; else it shares the question's ("how many samples
    and containers" asks a count of both)."""
    return asked_slot(piece if piece.endswith("?") else f"{piece}?") if _WH.match(piece) else whole


def part_slots(asked: str) -> tuple[str, ...]:
    """The slots a unit may fill: the question's own, and each part's that asks for a value of its own ("which
    tests ..., and how often?" → also frequency; "... and who signs it?" → also actor), and "open" (any statement)
    only when some part asks for no value."""
    whole = asked_slot(asked)
    each = [p.slot for p in parts(asked)]
    extra = [s for s in each if s not in _OPEN_SLOTS]
    if not extra:
        return (whole,)
    some_open = len(extra) < len(each)
    return tuple(dict.fromkeys((whole, *extra, *(("open",) if some_open else ()))))
