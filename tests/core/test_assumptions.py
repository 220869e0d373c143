"""What a question takes for granted (``core.assumptions``), read from its grammar; made-up questions only."""

import pytest

from citestream.core.assumptions import premises


@pytest.mark.parametrize("question,background,expected", [
    ("Since the guidance requires two batches for every site, how should we plan?", "",
     ["the guidance requires two batches for every site"]),
    ("Given that FDA waives the fee for small firms, who applies?", "", ["FDA waives the fee for small firms"]),
    ("Why does the guideline forbid informal approaches?", "", ["the guideline forbid informal approaches"]),
    ("Why must pilot protocols be as detailed as pivotal ones?", "",
     ["pilot protocols must be as detailed as pivotal ones"]),
    ("Why was the inspection program established?", "", ["the inspection program was established"]),
    ("How should we document it?", "I've read that the rule applies to every printout, so we plan ahead.",
     ["the rule applies to every printout"]),
])
def test_premises_are_the_statements_a_question_asserts(question, background, expected):
    assert premises(question, background) == expected


@pytest.mark.parametrize("question", [
    "Since 2017, how does the list distinguish reference drugs?",      # temporal "since"
    "Since what date must applications be electronic?",
    "If the brand comes in several strengths, which one is picked?",   # a case, not an assertion
    "After the owner receives our notice, how long do we have?",
    "Once we file the request, how soon is the meeting?",
    "What is a design space?",
])
def test_a_case_or_a_time_is_no_premise(question):
    assert premises(question) == []
