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


@pytest.mark.parametrize("question, asked_alone", [
    ("Under the CPG, when should FDA consider seizing distributed batches, and when an injunction?",
     ["Under the CPG, when should FDA consider seizing distributed batches, and",
      "Under the CPG, when should FDA consider , and when an injunction?"]),
    ("I run a lab. What restrictions on water, meals and alcohol apply to subjects around dosing?",
     ["I run a lab. What restrictions on water, and apply to subjects around dosing?",
      "I run a lab. What restrictions on , meals and apply to subjects around dosing?",
      "I run a lab. What restrictions on , and alcohol apply to subjects around dosing?"]),
])
def test_each_part_has_the_question_it_asks_alone(question, asked_alone):
    """The other parts' elements are left out and the question's frame (the background, "Under the CPG, when
    should FDA consider ...") is kept: the judge reads a part's unit with what that part asks."""
    assert [p.question for p in parts(question)] == asked_alone


def test_a_unit_that_answers_one_part_is_scored_with_that_parts_question():
    """Read with the whole question the judge gives the injunction's unit 0.11 (it asks for both); read with the
    part's own question it answers. Only the best units naming a part nothing passing names yet are read again."""
    from citestream.core.question_parts import PART_READS, rescored_for_parts

    question = "When should FDA consider seizing distributed batches, and when an injunction?"
    asked: list[tuple[str, list[str]]] = []

    def score(q: str, texts: list[str]) -> list[float]:
        asked.append((q, texts))
        return [0.9 if "Injunction" in t else 0.2 for t in texts]

    units = [["Seizure of distributed batches should be considered when ..."],
             ["Injunction should be considered when ...", "Remedies: Injunction should be considered when ..."],
             ["An injunction is a court order."], ["Injunction history."], ["Inspections are planned yearly."]]
    out = rescored_for_parts(score, question, units, [0.8, 0.2, 0.15, 0.1, 0.05], threshold=0.4)
    assert out == [0.8, 0.9, 0.2, 0.1, 0.05]  # the seizure part passes already: only the injunction's is read
    assert asked == [(parts(question)[1].question, [*units[1], *units[2]])] and PART_READS == 2
    assert rescored_for_parts(score, "What is an injunction?", units, [0.8, 0.2, 0.15, 0.1, 0.05], 0.4) == \
        [0.8, 0.2, 0.15, 0.1, 0.05]  # one thing asked: nothing read again


@pytest.mark.parametrize("question", [
    # a coordination in the asker's situation, not in what is asked
    "Our catheters are fully assembled and working but not yet sterilized or labeled. Are they finished devices?",
    # in a clause before the question word: leaving a piece out would drop the condition that decides
    "When an excipient rather than an API or finished product is sampled, which records does the investigator collect?",
    # a yes/no question asks one thing
    "Do we have to meet the ISO 13485 design and development clause?",
])
def test_a_part_is_asked_alone_only_when_the_asking_sentence_coordinates_what_it_asks(question):
    from citestream.core.question_parts import asked_alone

    assert asked_alone(question) == ()


def test_the_asked_alone_parts_keep_the_askers_situation_in_their_questions():
    from citestream.core.question_parts import asked_alone

    alone = asked_alone("I run a BA study. What restrictions on water, meals and alcohol apply around dosing?")
    assert [p.question for p in alone] == [
        "I run a BA study. What restrictions on water, and apply around dosing?",
        "I run a BA study. What restrictions on , meals and apply around dosing?",
        "I run a BA study. What restrictions on , and alcohol apply around dosing?"]
