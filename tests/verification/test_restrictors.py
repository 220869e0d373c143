"""A claim that changes a restrictor never passes: the rule behind the judge refuses it, whatever the judge says."""

import pytest

from citestream.verification.checks import restrictor_conflict


@pytest.mark.parametrize("claim, evidence", [
    ("Stability samples must be tested within the 30-day window.",
     "Stability samples tested out of the 30-day window must be reported."),
    ("FDA states that every biological product must be released using reference standards authorized by CBER.",
     "For certain biological products, reference standards authorized by CBER must be used before release."),
    ("Only major deviations from the written procedures have to be recorded and justified.",
     "Any deviation from the written procedures shall be recorded and justified."),
    ("An intact HEPA filter should retain at most 99.97 percent of particulates.",
     "An intact HEPA filter should be capable of retaining at least 99.97 percent of particulates."),
    ("Records may be kept for no more than 1 year after the expiration date.",
     "Records shall be maintained for at least 1 year after the expiration date."),
])
def test_a_changed_restrictor_is_a_conflict(claim, evidence):
    assert restrictor_conflict(claim, evidence)


@pytest.mark.parametrize("claim, evidence", [
    ("Each deviation must be recorded and justified.", "Any deviation from the written procedures shall be recorded."),
    ("Repeatability may be assessed with no fewer than six determinations.",
     "Repeatability should be assessed using a minimum of 6 determinations at 100 percent."),
    ("Changes to a system that only manages workflow are reported annually.",
     "Changes affecting these MES operations are generally submitted in annual reports."),
    ("Validation is normally inappropriate when only one batch is made.",
     "Process validation is normally inappropriate where a single batch is produced."),
])
def test_the_same_restrictor_in_other_words_is_not(claim, evidence):
    assert restrictor_conflict(claim, evidence) is None
