"""A question asking what a term is, and the unit that defines it (``core.definitions``)."""

import pytest

from citestream.core.definitions import asked_term, defines


@pytest.mark.parametrize("asking, terms", [
    ("How does ICH Q9 define a hazard?", ("hazard",)),
    ("What is a remote regulatory assessment (RRA) in FDA's bioresearch monitoring (BIMO) program?",
     ("remote regulatory assessment", "rra")),
    ("What is a target product profile (TPP) according to FDA's 2007 draft guidance?",
     ("target product profile", "tpp")),
    ("What are excipients?", ("excipient", "excipients")),
    ("What does OOS mean?", ("oos",)),
    ("What's a CAPA?", ("capa",)),
    ("Does FDA require a hazard analysis?", ()),
    ("Which tests are required, and how often?", ()),
    ("What is the procedure that the firm, its contractors and every supplier of components have to follow?", ()),
])
def test_the_term_is_read_from_the_asking_sentence(asking, terms):
    assert asked_term(asking) == terms


HAZARD = ("hazard",)
RRA = ("remote regulatory assessment", "rra")
TPP = ("target product profile", "tpp")
MANUFACTURER = ("manufacturer",)


@pytest.mark.parametrize("unit, terms, defining", [
    ("Hazard: The potential source of harm (ISO/IEC Guide 51).", HAZARD, True),
    ("Hazards are the potential sources of harm.", HAZARD, True),
    ("An RRA is an examination of an FDA-regulated establishment and/or its records.", RRA, True),
    ("Manufacturer means any person who designs, manufactures, fabricates, assembles, or processes a device.",
     MANUFACTURER, True),
    ("2.4 Target product profile (TPP) is a format for a summary of a drug development program.", TPP, True),
    # sentences that use the term without defining it
    ("I.6 Hazard Operability Analysis (HAZOP) is based on a theory.", HAZARD, False),
    ("It consists of the identification of hazards and the analysis of risks.", HAZARD, False),
    ("Organization shall have the meaning of manufacturer as defined in this part.", MANUFACTURER, False),
    ("Hazardous materials are stored apart.", HAZARD, False),
])
def test_a_unit_defines_the_term_only_in_a_definitions_form(unit, terms, defining):
    assert defines(unit, terms) is defining


def test_no_term_defines_nothing_and_a_long_sentence_is_read_in_bounded_time():
    assert not defines("Hazard: the potential source of harm.", ())
    assert asked_term("what is " + "a " * 100_000 + "?") == ()
