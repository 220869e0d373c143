"""Quantities in claims and evidence (``verification/numbers.py``), and what reading them costs (issue 54).

``check_numbers`` used to compare every claimed quantity with every evidence quantity, and ``quantities`` searched
all the text before each "one" for a pronoun: 2 s for a claim of 20,000 characters, 12.6 s for 50,000; a claim at
its cap (4,000 characters) against 80,000 characters of evidence took 2.6 s. Both are linear now, and give the
answers comparing every pair gave.
"""

from __future__ import annotations

import random

from citestream.verification.numbers import Quantity, check_numbers, quantities

from tests.support.regexes import fill, over_budget, own_cpu_s


def _supports(evidence: Quantity, claimed: Quantity) -> bool:
    """The rule as it was written pair by pair (and still reads best): the evidence interval lies inside the claimed
    one, and a plain value supports a claimed ceiling only when it is the ceiling."""
    if claimed.bound in ("le", "lt") and evidence.bound is None and evidence.value != claimed.value:
        return False
    return evidence.unit == claimed.unit and claimed.low <= evidence.low and evidence.high <= claimed.high


def _restates_other_limit(evidence: Quantity, claimed: Quantity) -> bool:
    return (claimed.bound in ("le", "lt", "ge", "gt") and evidence.bound == claimed.bound
            and evidence.unit == claimed.unit and evidence.value != claimed.value)


def _pairwise(claim: str, evidence: str) -> tuple[list[Quantity], list[Quantity]]:
    claimed, found = quantities(claim, claim=True), quantities(evidence)
    changed = [q for q in claimed if any(_restates_other_limit(e, q) for e in found)
               and not any(e.bound == q.bound and e.value == q.value and e.unit == q.unit for e in found)]
    unsupported = [q for q in claimed if q in changed or not any(_supports(e, q) for e in found)]
    conflicting = [q for q in unsupported if q.unit is not None and any(e.unit == q.unit for e in found)]
    return unsupported, conflicting


PHRASES = ["at most", "no more than", "up to", "at least", "more than", "over", "less than", "under", "within",
           "approximately", "about", "", "", ""]
AMOUNTS = ["1", "2", "5", "10", "14", "30", "80", "95", "0.5", "1,000", "one", "two", "ten",
           "9" * 400]  # a figure too large for a float: infinity
UNITS = ["%", " percent", " days", " day", " weeks", " months", " mg", " patients", " requests", "", " times"]


def _text(rng: random.Random) -> str:
    return ", ".join(f"{rng.choice(PHRASES)} {rng.choice(AMOUNTS)}{rng.choice(UNITS)}".strip()
                     for _ in range(rng.randint(0, 5)))


def test_the_indexed_check_gives_the_answers_of_every_pair():
    rng = random.Random(54)
    for _ in range(4000):
        claim, evidence = _text(rng), _text(rng)
        check = check_numbers(claim, evidence)
        assert (check.unsupported, check.conflicting) == _pairwise(claim, evidence), (claim, evidence)


def test_one_after_a_pronoun_is_no_number_however_long_the_text_before():
    assert [q.value for q in quantities("a phrase " * 5000 + "each one goes back within 2 days")] == [2.0]
    assert [(q.value, q.bound) for q in quantities("x" * 10_000 + " at most one of the three", claim=True)] == \
        [(1.0, "le")]
    assert quantities("the original one goes back") == quantities("each one goes") == []
    assert [q.value for q in quantities("bathe one goes")] == [1.0]  # a word that ends in "the" is no pronoun


def test_a_long_claim_and_long_evidence_are_read_in_linear_time():
    """Issue 54: 20,000 characters of "one one" took 2 s (now about 30 ms); a claim at its cap of 4,000 characters
    of "1%" against 80,000 of "at most 2%" took 2.6 s."""
    checks = []
    cpu_s = own_cpu_s(lambda: (quantities(fill("one one ", 20_000), claim=True),
                               checks.append(check_numbers(fill("1% ", 4_000), fill("at most 2% ", 80_000)))))
    [check] = checks
    print(f"{cpu_s:.3f} s of CPU")
    assert check.unsupported and not over_budget(cpu_s, 0.5)
