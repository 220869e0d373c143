"""Quantities in claims and evidence, as intervals, so '>80%' never supports '95%' and '95%' never '>80%'."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass

_COMPARATORS: list[tuple[str, str]] = [
    (r"no more than|not more than|not to exceed|not exceed(?:ing)?|at most|up to|maximum of|≤|<=", "le"),
    (r"no less than|not less than|no fewer than|not fewer than|at least|minimum of|≥|>=", "ge"),
    (r"more than|greater than|exceeding|exceeds?|over|above|>", "gt"),
    (r"less than|fewer than|under|below|<", "lt"),
    (r"within", "le"),
    (r"approximately|about|around|roughly|nearly|almost|~|≈", "approx"),
]
_UNITS = {
    "%": "%", "percent": "%", "per cent": "%",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute",
    "mg": "mg", "g": "g", "kg": "kg", "ml": "ml", "l": "l", "µg": "ug", "mcg": "ug", "ppm": "ppm",
    "patients": "patient", "subjects": "patient", "pages": "page", "copies": "copy", "times": "times",
}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
                 "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100, "single": 1}
_PRONOUN_BEFORE = re.compile(
    r"(?:^|\W)(?:the|this|that|each|every|any|no|another|which)(?:\s{1,20}[a-z]{1,40})?\s{1,20}$", re.I)
"""What makes "one" a pronoun, not a number: "the original one goes back", "each one". Bounded, so it is read in
the ``_PRONOUN_REACH`` characters before the "one" alone: searching all the text before every "one" was quadratic
(12.6 s for a claim of 50,000 characters, issue 54)."""
_PRONOUN_REACH = 1 + len("another") + 20 + 40 + 20
_CMP = "|".join(f"(?:{p})" for p, _ in _COMPARATORS)
_COMPARATOR_NAMES = [(re.compile(p), name) for p, name in _COMPARATORS]
_QUANTITY = re.compile(
    rf"(?:(?<![A-Za-z])(?P<cmp>{_CMP})\s*)?(?<![A-Za-z0-9.\-])(?P<num>\d+(?:,\d{{3}})*(?:\.\d+)?|"
    rf"{'|'.join(_NUMBER_WORDS)})(?![A-Za-z0-9])\s*(?:-\s*)?(?P<unit>%|per ?cent|[A-Za-zµ]+)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str | None
    low: float
    high: float
    text: str
    bound: str | None = None   # the comparator: le, ge, lt, gt (a limit), approx, or None (a stated value)


def _interval(value: float, cmp: str | None, claim: bool) -> tuple[float, float]:
    if cmp == "gt":
        return (math.nextafter(value, math.inf), math.inf)
    if cmp == "ge":
        return (value, math.inf)
    if cmp == "lt":
        return (-math.inf, math.nextafter(value, -math.inf))
    if cmp == "le":
        return (-math.inf, value)
    if cmp == "approx" and claim:
        return (value * 0.9, value * 1.1)  # a hedged claim tolerates ±10%
    return (value, value)                  # evidence is taken at its stated value


def _comparator(text: str | None) -> str | None:
    if not text:
        return None
    for pattern, name in _COMPARATOR_NAMES:
        if pattern.fullmatch(text.strip().lower()):
            return name
    return None


def quantities(text: str, claim: bool = False) -> list[Quantity]:
    out = []
    for m in _QUANTITY.finditer(text):
        raw = m["num"].lower()
        value = float(_NUMBER_WORDS[raw]) if raw in _NUMBER_WORDS else float(raw.replace(",", ""))
        bound = _comparator(m["cmp"])
        if raw in _NUMBER_WORDS and not m["unit"] and not bound:
            continue  # "one of the", "two sections": number words only count with a unit or a comparator
        unit = _UNITS.get((m["unit"] or "").lower().replace(" ", "")) if m["unit"] else None
        start = m.start("num")
        if raw == "one" and unit is None and _PRONOUN_BEFORE.search(text, max(0, start - _PRONOUN_REACH), start):
            continue
        low, high = _interval(value, bound, claim)
        out.append(Quantity(value, unit, low, high, m.group(0).strip(), bound))
    return out


@dataclass(frozen=True)
class NumericCheck:
    unsupported: list[Quantity]   # claimed quantities no evidence quantity supports
    conflicting: list[Quantity]   # ... of which the evidence states a different value in the same unit


def check_numbers(claim: str, evidence: str) -> NumericCheck:
    """Each claimed quantity against every evidence quantity, through ``_Found``'s tables: comparing every pair was
    quadratic in a long claim against a long context (issue 54)."""
    claimed = quantities(claim, claim=True)
    found = _Found(quantities(evidence))
    changed = {i for i, q in enumerate(claimed) if found.restates_other_limit(q) and not found.states_same_limit(q)}
    unsupported = [q for i, q in enumerate(claimed) if i in changed or not found.supports(q)]
    conflicting = [q for q in unsupported if q.unit is not None and q.unit in found.units]
    return NumericCheck(unsupported, conflicting)


class _Found:
    """The evidence's quantities indexed for ``supports`` and ``restates_other_limit``: an evidence interval is a
    point (a stated or approximate value), a ray up (``gt``, ``ge``) or a ray down (``lt``, ``le``), so whether one
    lies inside a claimed interval is a look-up in sorted lists (each answer the same as comparing every pair:
    ``tests/verification/test_numbers.py``)."""

    def __init__(self, found: list[Quantity]) -> None:
        self.units = {e.unit for e in found}
        self._limits: dict[tuple[str | None, str | None], set[float]] = defaultdict(set)
        self._points: dict[str | None, list[float]] = defaultdict(list)   # any point: stated or approximate
        self._hedged: dict[str | None, list[float]] = defaultdict(list)   # points with a bound (approximate)
        self._stated: dict[str | None, set[float]] = defaultdict(set)     # points without a bound
        self._up: dict[str | None, list[float]] = defaultdict(list)       # low ends of rays up
        self._down: dict[str | None, list[float]] = defaultdict(list)     # high ends of rays down
        self._whole: set[str | None] = set()
        for e in found:
            self._limits[(e.bound, e.unit)].add(e.value)
            if e.low == e.high:
                self._points[e.unit].append(e.low)
                (self._stated[e.unit].add(e.low) if e.bound is None else self._hedged[e.unit].append(e.low))
            elif e.high == math.inf and e.low > -math.inf:
                self._up[e.unit].append(e.low)
            elif e.low == -math.inf and e.high < math.inf:
                self._down[e.unit].append(e.high)
            else:  # "at most" a figure too large for a float: the whole line
                self._whole.add(e.unit)
        for table in (self._points, self._hedged, self._up, self._down):
            for values in table.values():
                values.sort()

    def supports(self, q: Quantity) -> bool:
        """Some evidence interval lies inside the claimed one (same unit). A claimed ceiling ("up to two", "at most
        5%") says where the most allowed lies, so a plain smaller value ("one request") does not state it."""
        low, high = q.low, q.high
        if q.bound in ("le", "lt"):  # a plain value supports a ceiling only when it is the ceiling itself
            points = self._hedged.get(q.unit, [])
            if q.value in self._stated.get(q.unit, ()) and low <= q.value <= high:
                return True
        else:
            points = self._points.get(q.unit, [])
        if bisect_left(points, low) < bisect_right(points, high):
            return True
        up, down = self._up.get(q.unit, []), self._down.get(q.unit, [])
        if high == math.inf and up and up[-1] >= low:
            return True
        if low == -math.inf and down and down[0] <= high:
            return True
        return low == -math.inf and high == math.inf and q.unit in self._whole

    def restates_other_limit(self, q: Quantity) -> bool:
        """Some evidence quantity sets the same kind of limit in the same unit at another value: "within 14 days"
        against a claimed "within 30 days" is the deadline changed, although 14 days are within 30."""
        if q.bound not in ("le", "lt", "ge", "gt"):
            return False
        values = self._limits.get((q.bound, q.unit), set())
        return len(values) > 1 or (len(values) == 1 and q.value not in values)

    def states_same_limit(self, q: Quantity) -> bool:
        """Some evidence quantity has the claimed bound, value and unit."""
        return q.value in self._limits.get((q.bound, q.unit), set())
