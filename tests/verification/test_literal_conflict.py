"""Two false twins that passed as restatements (issue 52, 2026-12-03): a number moved to the neighbouring sentence's
act, and "not exclude" for "not submit". The sentences are the corpus' (ANDA_Formal_Meetings_Complex_Products.pdf,
pages 9 and 13).

The relevance model is replaced by fixed scores per sentence, so only the rules decide which sentence is read first
and what it must state.
"""

from __future__ import annotations

import pytest

from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.verification.checks import negated
from citestream.verification.relevance_judge import RelevanceJudge

GOALS = ("FDA agreed to grant or deny 90 percent of pre-submission meeting requests within 30 days. If granted, FDA "
         "agreed to conduct 90 percent of pre-submission meetings within 60 days of the meeting request.")
QUESTIONS = "In general, a prospective ANDA applicant should not submit questions in a pre-submission meeting request."
META = dict(pdf="ANDA_Formal_Meetings_Complex_Products.pdf", issuer="FDA", authority="FDA", section="")


class _Scores:
    """The score of each unit by the words it holds; 0.1 for any other."""

    def __init__(self, by_words: dict[str, float]):
        self.by_words = by_words

    def score(self, claim: str, units: list[str]) -> list[float]:
        return [next((s for w, s in self.by_words.items() if w in u), 0.1) for u in units]


def _verdict(claim: str, text: str, scores: dict[str, float]) -> str:
    chunk = GroundingChunk(chunk_id="anda-chunk-56", doc_id="anda", text=text, score=0.9, metadata=dict(META))
    return RelevanceJudge(_Scores(scores)).judge(Claim(id="c", text=claim), GroundingPack(chunks=[chunk])).verdict


def test_a_restatement_fails_when_the_sentence_in_the_claims_own_words_disagrees():
    """The 60-day sentence reads first as a restatement ("conduct meetings" for "grant or deny requests"); the sentence
    that grants or denies the requests says 30 days."""
    ranked = {"60 days": 0.95, "30 days": 0.8}
    assert _verdict("Within 60 days, FDA agreed to grant or deny 90 percent of pre-submission meeting requests", GOALS,
                    ranked) == "fail"
    assert _verdict("Within 60 days of the request, FDA agreed to convene 90 percent of pre-submission meetings", GOALS,
                    ranked) == "pass"  # no other sentence states "convene": the restatement stands


@pytest.mark.parametrize("text, denied", [
    ("an applicant should not exclude questions", False),
    ("an applicant should not submit questions", True),
    ("the data are omitted from the report", True),
    ("the data are excluded from the report", True),
])
def test_exclude_and_omit_say_not_include(text, denied):
    assert negated(text) is denied


def test_not_exclude_is_not_a_restatement_of_not_submit():
    assert _verdict("In general, a prospective ANDA applicant should not exclude questions in a pre-submission "
                    "meeting request", QUESTIONS, {"questions": 0.96}) == "fail"
    assert _verdict("In general, a prospective ANDA applicant should not submit questions in a pre-submission "
                    "meeting request", QUESTIONS, {"questions": 0.96}) == "pass"
