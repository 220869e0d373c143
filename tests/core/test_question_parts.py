"""A question that asks for several things: its parts, the value each asks for, and what covers each."""

import pytest

from citestream.core.question_parts import part_slots, parts


@pytest.mark.parametrize("question, own", [
    ("What restrictions on water, meals and alcohol apply to subjects around dosing?", ["water", "meal", "alcohol"]),
    ("Under the process validation CPG, when should FDA consider seizing distributed batches, and when an "
     "injunction?", ["seiz", "injunction"]),
    ("Which tests must be run, and how often?", ["test", "often"]),
    ("When are the data of a subject who vomits excluded for IR vs MR products?", ["ir", "mr"]),
    ("In ICH Q11 Example 1, what water content and reflux time limits does the approach set?", ["water", "reflux"]),
])
def test_each_coordinated_part_is_known_by_the_terms_only_it_names(question, own):
    found = parts(question)
    assert len(found) == len(own)
    assert all(term in part.terms for part, term in zip(found, own))


@pytest.mark.parametrize("question", [
    "What does the Food and Drug Administration (FDA) require of a sponsor?",  # a name, not two things
    "What is the purpose of the guidance?",
    "How long must records be kept?",
])
def test_a_question_that_asks_for_one_thing_has_no_parts(question):
    assert parts(question) == ()


def test_each_part_asks_for_its_own_value_and_a_unit_covers_it_by_that_value():
    tests, often = parts("Which tests must be run, and how often?")
    assert often.slot == "frequency" and often.covered_by("Stability tests are repeated annually.")
    assert tests.covered_by("The identity test must be run on every batch.")
    assert set(part_slots("What must the record show, and who signs it?")) >= {"actor", "open"}
    assert part_slots("How long must records be kept?") == ("duration",)


def test_a_part_without_a_wh_word_of_its_own_asks_what_the_question_asks():
    """"How many samples and containers": a count of both, so a unit without a number fills neither; "open" is
    among the slots only when some part asks for no value."""
    assert [p.slot for p in parts("How many samples and containers are collected?")] == ["count", "count"]
    assert part_slots("How many samples and containers are collected?") == ("count",)
    assert part_slots("Which tests must be run, and how often?") == ("frequency", "open")
