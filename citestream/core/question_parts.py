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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
    question: str = ""     # the question with the other parts' own words left out: what this part asks alone

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
    head = asked.strip()[:len(asked.strip()) - len(sentences[-1])]
    cuts = _elements(sentences[-1][:2000], pieces)
    return tuple(Part(o, asked_slot(p if p.endswith("?") else f"{p}?"),
                      head + _cut(sentences[-1][:2000], [c for j, c in enumerate(cuts) if j != i]))
                 for i, (o, p) in enumerate(zip(own, pieces)))


def _elements(sentence: str, pieces: list[str]) -> list[tuple[int, int]]:
    """Where each coordinated element stands in ``sentence``: a middle piece whole; the first piece's last and the
    last piece's first words, as many as the shortest piece has (the rest of them is the question's frame:
    "Under the CPG, when should FDA consider [seizing distributed batches], and [when an injunction]?")."""
    spans, cursor = [], 0
    for piece in pieces:
        start = sentence.find(piece, cursor)
        start = cursor if start < 0 else start
        spans.append([(start + m.start(), start + m.end()) for m in re.finditer(r"\S+", piece)])
        cursor = start + len(piece)
    n = min(len(words) for words in spans)
    out = []
    for i, words in enumerate(spans):
        chosen = words[-n:] if i == 0 else words[:n] if i == len(spans) - 1 else words
        out.append((chosen[0][0], chosen[-1][1]))
    return out


def _cut(sentence: str, spans: list[tuple[int, int]]) -> str:
    """``sentence`` without the other parts' elements: what one part asks alone. "... when should FDA consider ,
    and when an injunction?" is read by the judge as the injunction's own question (0.96 for "Injunction should be
    considered when …", against 0.11 read with the whole question)."""
    kept, cursor = [], 0
    for start, end in sorted(spans):
        kept.append(sentence[cursor:start])
        cursor = max(cursor, end)
    kept.append(sentence[cursor:])
    return " ".join("".join(kept).split())


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


def asked_alone(asked: str) -> tuple[Part, ...]:
    """The parts whose own question (``Part.question``) stands for what the asker wants of each: a coordination in
    the asking sentence's main clause ("when should FDA consider seizing batches, and when an injunction?"), not in
    the asker's situation ("Our catheters are assembled and working but not yet sterilized or labeled. Are they
    finished devices?"), nor in a clause before the question word ("When an API or finished product is sampled,
    which records ...?": leaving one out would drop the condition that decides), nor in a yes/no question, which
    asks one thing."""
    sentence = _SENTENCE_END.split(asked.strip())[-1]
    if asked_slot(sentence) == "yes_no":
        return ()
    pieces = _pieces(sentence[:2000])
    if any(_WH_WORD.search(" ".join(piece.split()[1:])) for piece in pieces[1:]):
        return ()
    head = asked.strip()[:len(asked.strip()) - len(sentence)]
    return tuple(replace(p, question=head + p.question) for p in parts(sentence))


PART_READS = 2
"""How many units naming a part the judge reads with the part's own question, when none passes with the whole one."""


def rescored_for_parts(score: Callable[[str, list[str]], Sequence[float]], asked: str,
                       units: Sequence[Sequence[str]], scores: Sequence[float], threshold: float) -> list[float]:
    """Each unit's score (``scores``: its best reading's, for the whole question ``asked``), raised to the judge's
    score for the part of a coordinated question it names (``Part.question``), for the ``PART_READS`` best units
    naming a part that no unit passing ``threshold`` names yet. A unit that answers one part scores low with the
    whole question: the judge reads the question as asking for both. ``units``: each unit's (or row's) readings.
    Generate and validate both call it, so a quoted part passes the validator's check with the same score."""
    out = list(scores)
    for part in asked_alone(asked):
        naming = [i for i, readings in enumerate(units) if any(part.covered_by(r) for r in readings)]
        if not naming or any(out[i] >= threshold for i in naming):
            continue
        top = sorted(naming, key=lambda i: (-out[i], i))[:PART_READS]
        flat = list(score(part.question, [r for i in top for r in units[i]]))
        start = 0
        for i in top:
            out[i] = max(out[i], *flat[start:start + len(units[i])])
            start += len(units[i])
    return out


def part_slots(asked: str) -> tuple[str, ...]:
    """The slots a unit may fill: the question's own, and each part's that asks for a value of its own ("which
    tests ..., and how often?" → also frequency; "... and who signs it?" → also actor)."""
    whole = asked_slot(asked)
    extra = [p.slot for p in parts(asked) if p.slot not in _OPEN_SLOTS]
    if not extra:
        return (whole,)
    return tuple(dict.fromkeys((whole, *extra, "open")))
