"""Backstops that can only refuse, found by minimal false twins of the dev sets' true claims (one word changed each,
2026-12-02): a word of the opposite direction the evidence never uses, an act done to another party, and a
notification sent to another party (2026-12-03)."""

import pytest

from citestream.verification.checks import direction_conflict
from citestream.verification.structure import structural_conflict

NOTICE = "applicants must submit the required notification of commercial marketing to FDA within the 30-day time frame."
COMMENTS = "In general, FDA does not intend to provide preliminary written comments in advance of an MCRM."


@pytest.mark.parametrize("claim, evidence", [
    # both say "must": the word the claim changed decides, not the one they share
    ("Applicants must send FDA the optional notification of commercial marketing within the 30-day time frame",
     NOTICE),
    ("FDA generally does not intend to provide preliminary oral comments before an MCRM", COMMENTS),
    ("FDA generally does not intend to provide preliminary written comments after an MCRM", COMMENTS),
    ("The guidance will replace an existing 1998 draft guidance of a different name",
     "The guidance will replace an existing 1998 draft guidance of the same name."),
])
def test_a_word_of_the_opposite_direction_is_a_conflict(claim, evidence):
    assert direction_conflict(claim, evidence)


@pytest.mark.parametrize("claim, evidence", [
    ("Applicants must send FDA the required notification of commercial marketing within the 30-day time frame",
     NOTICE),
    ("FDA generally does not intend to provide preliminary written comments before an MCRM", COMMENTS),
    ("Both products must be the same, or the differences justified", "The products must be identical, or any "
     "difference must be justified."),
])
def test_the_same_direction_in_other_words_is_not(claim, evidence):
    assert direction_conflict(claim, evidence) is None


def test_an_act_done_to_another_party_is_a_conflict():
    evidence = "The applicant must notify FDA in writing within 14 days of the filing of any legal action."
    assert "undergoes 'notify'" in structural_conflict(
        "Applicants must notify the applicant in writing within 14 days of the filing of any legal action",
        evidence, "FDA")
    assert structural_conflict("Applicants must notify FDA in writing within 14 days of the filing of any legal "
                               "action", evidence, "FDA") is None


@pytest.mark.parametrize("claim", [
    "Applicants must send the applicant the required notification of commercial marketing within the 30-day time frame",
    "Applicants must send the required notification of commercial marketing to the sponsor within the 30-day frame",
    "Applicants must provide the holder the required notification of commercial marketing within the 30-day frame",
])
def test_what_goes_to_another_party_is_a_conflict_whatever_the_verb_of_sending(claim):
    assert "to whom" in structural_conflict(claim, NOTICE, "FDA")


@pytest.mark.parametrize("claim", [
    "Applicants must send FDA the required notification of commercial marketing within the 30-day time frame",
    "Applicants must provide the required notification of commercial marketing to the Agency within 30 days",
    "Applicants must send the applicant's report to FDA within the 30-day time frame",  # another thing sent
])
def test_the_same_recipient_in_other_words_is_not(claim):
    assert structural_conflict(claim, NOTICE, "FDA") is None


def test_a_doer_named_by_its_initials_is_the_same_party_and_still_compared():
    """DQST: "concurred by the WG" is the Working Group's act; a negated act or another doer still conflicts."""
    evidence = ("The DQST survey assignment, concurred by the WG and approved by ORA, is issued at the beginning of "
                "the fiscal year.")
    assert structural_conflict("The survey assignment is issued after the DQST Working Group concurs and ORA "
                               "approves it.", evidence, "FDA") is None
    assert "polarity" in structural_conflict("The survey assignment is issued after the DQST Working Group does not "
                                             "concur.", evidence, "FDA")
    assert "who does 'concur'" in structural_conflict("The survey assignment is issued after the applicant concurs.",
                                                      evidence, "FDA")
