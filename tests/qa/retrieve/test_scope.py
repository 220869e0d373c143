"""Whose rules a question asks about: named regulators narrow the search to their documents; unindexed ones are
refused."""

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
    # letters whose meaning is asked: a document may define them otherwise
    ("In the DQST program, what does EMA stand for when it talks about APIs at risk?", []),
    ("What is the abbreviation EMA short for in the survey program?", []),
    ("What does EMA require, and what does EMA stand for?", ["EMA"]),
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


def test_a_regulator_the_scope_field_does_not_name_is_answered_from_its_documents():
    """qa-v2.8: the regulator a question names decides, whatever the scope field says; refused only when none of its
    documents is indexed."""
    asked = asked_scope("What does the EMA require for electronic signatures?", "FDA", INDEXED)
    assert asked.refusal == "no EMA documents are in the index"
    answered = asked_scope("What does the EMA require for electronic signatures?", "FDA", INDEXED | {"EMA"})
    assert answered.authorities == ("EMA",) and answered.refusal is None and answered.inferred
    kept = asked_scope("Does FDA accept EMA inspection reports?", "FDA", INDEXED)
    assert kept.authorities == ("FDA",) and kept.refusal is None and not kept.inferred
    sops = asked_scope("Searching our SOPs only: how often does the MHRA require self-inspections?", "SOPS",
                       INDEXED | {"SOPS"}, issuers={"MHRA"})
    assert sops.authorities == () and sops.issuers == ("MHRA",) and sops.refusal is None


def test_a_regulator_without_a_scope_is_searched_by_its_documents_issuer():
    who = asked_scope("Per the WHO, what is a stability zone?", "MIXED", INDEXED, issuers={"WHO", "FDA"})
    assert who.authorities == () and who.issuers == ("WHO",) and who.refusal is None
    both = asked_scope("Does FDA accept MHRA inspection reports?", "MIXED", INDEXED, issuers={"MHRA"})
    assert both.authorities == ("FDA",) and both.issuers == ("MHRA",)
    missing = asked_scope("What does the EMA or the MHRA expect?", "MIXED", INDEXED, issuers={"WHO"})
    assert missing.refusal == "the question asks about EMA, MHRA, whose documents are not in the index"
    partly = asked_scope("What does the EMA or the MHRA expect?", "MIXED", INDEXED, issuers={"MHRA"})
    assert partly.refusal is None and partly.issuers == ("MHRA",)
