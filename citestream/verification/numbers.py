"""Quantities in claims and evidence, as intervals, so '>80%' never supports '95%' and '95%' never '>80%'."""

from __future__ import annotations

import math
import re
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
_PRONOUN_BEFORE = re.compile(r"(?:^|\W)(?:the|this|that|each|every|any|no|another|which)(?:\s+[a-z]+)?\s+$", re.I)
"""What makes "one" a pronoun, not a number: "the original one goes back", "each one"."""
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
        if raw == "one" and unit is None and _PRONOUN_BEFORE.search(text[:m.start("num")]):
            continue
        low, high = _interval(value, bound, claim)
        out.append(Quantity(value, unit, low, high, m.group(0).strip(), bound))
    return out


def supports(evidence: Quantity, claimed: Quantity) -> bool:
    """The evidence interval lies inside the claimed one (same unit). A claimed ceiling ("up to two", "at most 5%")
    says where the most allowed lies, so a plain smaller value ("one request") does not state it."""
    if claimed.bound in ("le", "lt") and evidence.bound is None and evidence.value != claimed.value:
        return False
    return evidence.unit == claimed.unit and claimed.low <= evidence.low and evidence.high <= claimed.high


@dataclass(frozen=True)
class NumericCheck:
    unsupported: list[Quantity]   # claimed quantities no evidence quantity supports
    conflicting: list[Quantity]   # ... of which the evidence states a different value in the same unit


def restates_other_limit(evidence: Quantity, claimed: Quantity) -> bool:
    """The evidence sets the same kind of limit in the same unit at another value: "within 14 days" against a
    claimed "within 30 days" is the deadline changed, although 14 days are within 30."""
    return (claimed.bound in ("le", "lt", "ge", "gt") and evidence.bound == claimed.bound
            and evidence.unit == claimed.unit and evidence.value != claimed.value)


def check_numbers(claim: str, evidence: str) -> NumericCheck:
    claimed = quantities(claim, claim=True)
    found = quantities(evidence)
    changed = [q for q in claimed if any(restates_other_limit(e, q) for e in found)
               and not any(e.bound == q.bound and e.value == q.value and e.unit == q.unit for e in found)]
    unsupported = [q for q in claimed if q in changed or not any(supports(e, q) for e in found)]
    conflicting = [q for q in unsupported if q.unit is not None and any(e.unit == q.unit for e in found)]
    return NumericCheck(unsupported, conflicting)
