"""Whose rules a question asks about: named regulators narrow the scope; an unindexed one is refused."""

import pytest

from citestream.qa.retrieve.scope import asked_scope, named_authorities

INDEXED = {"FDA", "ICH"}


@pytest.mark.parametrize("question, named", [
    ("What does Health Canada require for stability data?", ["Health Canada"]),
    ("Under EU GMP Annex 1, what is required for sterile filling?", ["EMA"]),
    ("According to the European Medicines Agency, how long is validation?", ["EMA"]),
    ("What do Japanese regulations say about bridging studies?", ["PMDA"]),
    ("How does Korea's MFDS review generics?", ["MFDS"]),
    ("Per the WHO, what is a stability zone?", ["WHO"]),
    ("How does FDA define bioavailability?", ["FDA"]),
    ("What does ICH Q9 say about risk?", ["ICH"]),
    ("Under ICH Q8(R2), is a design space required?", ["ICH"]),
    # not a regulator's rules
    ("Can an ANDA reference a drug approved in Canada?", []),
    ("How close must inactive ingredients be to count as Q1/Q2 the same?", []),
    ("WHO MUST SIGN THE FORM?", []),  # all capitals: the word, not the organisation
    ("who reviews the application?", []),
    ("What does the EU AI Act say about drug development?", []),
])
def test_named_authorities(question, named):
    assert named_authorities(question) == named


def test_no_authority_named_searches_everything():
    assert asked_scope("How long is the filing review?", "MIXED", INDEXED).authorities is None


def test_a_named_indexed_authority_narrows_the_scope():
    asked = asked_scope("How does FDA define a drug?", "MIXED", INDEXED)
    assert asked.authorities == ("FDA",) and asked.inferred and asked.refusal is None
    both = asked_scope("Does FDA apply ICH Q9 to generics?", "MIXED", INDEXED)
    assert both.authorities == ("FDA", "ICH") and both.refusal is None


def test_a_regulator_without_documents_is_refused_with_the_reason():
    asked = asked_scope("What does the MHRA expect for audit trails?", "MIXED", INDEXED)
    assert asked.refusal and "MHRA" in asked.refusal
    ema = asked_scope("What does EMA require for electronic signatures?", "MIXED", INDEXED)
    assert ema.authorities == ("EMA",) and "no EMA documents" in ema.refusal
    assert asked_scope("What does EMA require?", "MIXED", INDEXED | {"EMA"}).refusal is None


def test_a_question_outside_the_publishers_scope_is_refused():
    asked = asked_scope("What does the EMA require for electronic signatures?", "FDA", INDEXED)
    assert asked.refusal and "outside the requested scope FDA" in asked.refusal
    kept = asked_scope("Does FDA accept EMA inspection reports?", "FDA", INDEXED)
    assert kept.authorities == ("FDA",) and kept.refusal is None
