"""A word the sentence states by its antonym is a conflict whatever the model scores (issue 52): the claim judge's
model reads "issued at the end of the fiscal year" and "issued at the beginning of the fiscal year" as one statement
(0.86 for dev claim dqst-c0038 read without its document's name; docs/experiments/2026-12-03-claims-unframed.md).
"""

from __future__ import annotations

import pytest

from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.verification.checks import antonym_conflict
from citestream.verification.relevance_judge import RelevanceJudge

DQST = dict(pdf="DRUG_QUALITY_SAMPLING_AND_TESTING_DQST_-_HUMAN_DRUGS_7356.008.pdf", issuer="FDA", authority="FDA",
            title="FDA Compliance Program 7356.008 Drug Quality Sampling and Testing", section="")
ISSUED = ("The DQST survey assignment, concurred by the WG and approved by ORA, is issued at the beginning of the "
          "fiscal year.")


class _Sure:
    """Every sentence restates the claim (0.9): only names, parties, numbers, restrictors and conflicts are read."""

    def score(self, claim: str, units: list[str]) -> list[float]:
        return [0.9] * len(units)


def _verdict(claim: str, sentence: str) -> str:
    chunk = GroundingChunk(chunk_id="dqst-1", doc_id="dqst", text=sentence, score=0.9, metadata=DQST)
    return RelevanceJudge(_Sure()).judge(Claim(id="c", text=claim), GroundingPack(chunks=[chunk])).verdict


@pytest.mark.parametrize("claim, sentence", [
    ("The survey assignment is issued at the end of the fiscal year.", ISSUED),
    ("The records are kept in an external archive.", "The records are kept in an internal archive."),
    ("The maximum dose is 10 mg.", "The minimum dose is 10 mg."),
])
def test_a_word_the_sentence_states_by_its_antonym_conflicts(claim, sentence):
    assert antonym_conflict(claim, sentence)


@pytest.mark.parametrize("claim, sentence", [
    ("The survey assignment is issued at the start of the fiscal year.", ISSUED),  # a synonym of "beginning"
    ("Testing ends when the study begins.", "Testing ends when the study begins."),
    ("The survey assignment is issued yearly.", ISSUED),
])
def test_other_words_are_no_antonym_conflict(claim, sentence):
    assert antonym_conflict(claim, sentence) is None


def test_a_restatement_with_an_antonym_never_passes():
    assert _verdict("The survey assignment is issued at the beginning of the fiscal year.", ISSUED) == "pass"
    assert _verdict("The survey assignment is issued at the end of the fiscal year.", ISSUED) == "fail"
