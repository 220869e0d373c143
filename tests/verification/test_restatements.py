"""A true claim worded differently from its sentence (issue 52): synonyms in a common sense, "only if" for "not …
unless", "non-binding" for "no legal force", "apart from" for "but not". And what a restatement may never drop: who
the rule is between, and which comes first. The sentences are the dev documents' (claims_docs_dev).

The relevance model is replaced by a constant score, so only the rules decide: 0.4 (a sentence that may state the
claim, every word of it asked) or 0.9 (a restatement, only names, parties, numbers and restrictors asked).
"""

from __future__ import annotations

import pytest

from citestream.core.clauses import clauses
from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.verification.checks import negated, negated_where
from citestream.verification.relevance_judge import RelevanceJudge
from citestream.verification.structure import structural_conflict
from citestream.verification.synonyms import synonymous, table_path
from citestream.verification.terms import claim_terms


class _Score:
    def __init__(self, score: float):
        self.value = score

    def score(self, claim: str, units: list[str]) -> list[float]:
        return [self.value] * len(units)


DQST = dict(pdf="DRUG_QUALITY_SAMPLING_AND_TESTING_DQST_-_HUMAN_DRUGS_7356.008.pdf", issuer="FDA", authority="FDA",
            title="FDA Compliance Program 7356.008 Drug Quality Sampling and Testing", section="")
CHECK = "No Check Analysis is required for any of the required tests for this assignment."
WHIRL = ("API samples should not be collected in Whirl-Pak bags or other plastics unless the firm uses this type of "
         "container for storage of the substance.")
GUIDE = ("The PIC/S GDP Guide is legally non-binding unless it has been declared a legal standard in the jurisdiction "
         "of a Participating Authority.")
WHOLESALE = ("Wholesale distribution of medicinal products is all activities consisting of procuring, holding, "
             "supplying, importing, or exporting medicinal products, apart from supplying medicinal products to the "
             "public.")
SURVEY = ("The DQST survey assignment, concurred by the WG and approved by ORA, is issued at the beginning of the "
          "fiscal year.")


def _verdict(claim: str, sentence: str, score: float) -> str:
    chunk = GroundingChunk(chunk_id="dqst-chunk-1", doc_id="dqst", text=sentence, score=0.9, metadata=dict(DQST))
    return RelevanceJudge(_Score(score)).judge(Claim(id="c", text=claim), GroundingPack(chunks=[chunk])).verdict


def test_the_synonym_table_is_installed():
    assert table_path().exists(), "make install writes it"


@pytest.mark.parametrize("a, b", [("needing", "requiring"), ("needs", "required"), ("maker", "manufacturer"),
                                  ("stores", "storage"), ("holds", "has")])
def test_words_of_one_common_sense_are_synonyms(a, b):
    assert synonymous(a, b) and synonymous(b, a)


@pytest.mark.parametrize("a, b", [("longer", "shorter"), ("domestic", "foreign"), ("increase", "decrease"),
                                  ("earlier", "later"), ("include", "submit"), ("send", "submit")])
def test_antonyms_and_other_words_are_not(a, b):
    assert not synonymous(a, b)


def test_a_synonym_is_read_as_the_word_but_a_changed_word_is_not():
    assert _verdict("Under FDA's DQST compliance program, none of the required tests in the assignment needs a "
                    "check analysis.", CHECK, 0.4) == "pass"
    assert _verdict("Under FDA's DQST compliance program, none of the required tests in the assignment needs a "
                    "second analysis.", CHECK, 0.4) != "pass"


@pytest.mark.parametrize("claim, sentence", [
    ("API samples may be collected in Whirl-Pak bags only if the firm stores the substance in that container.", WHIRL),
    ("The PIC/S GDP Guide has no legal force unless it has been declared a legal standard.", GUIDE),
    ("Wholesale distribution covers supplying medicinal products, but not supplying them to the public.", WHOLESALE),
])
def test_the_same_polarity_in_other_words_is_no_conflict(claim, sentence):
    assert negated_where(claim, claim) == negated_where(sentence, claim)
    assert structural_conflict(claim, sentence) is None


@pytest.mark.parametrize("claim, sentence", [
    ("API samples may be collected in Whirl-Pak bags if the firm stores the substance in that container.", WHIRL),
    ("The PIC/S GDP Guide has legal force unless it has been declared a legal standard.", GUIDE),
])
def test_a_dropped_negation_still_conflicts(claim, sentence):
    assert (negated_where(claim, claim) != negated_where(sentence, claim)) or structural_conflict(claim, sentence)


def test_a_prefix_negates_once_a_prefix():
    assert negated("a non-sterile product") and not negated("a non-non-sterile product")
    assert not negated("nonsense about noon-time")


def test_only_if_is_read_as_not_unless_in_the_parse():
    collect = next(c for c in clauses(WHIRL.replace("should not", "may").replace("unless", "only if"))
                   if c.predicate == "collect")
    assert collect.negated  # "may be collected only if" says "not collected unless"


def test_polarity_and_bounds_are_not_asked_as_words():
    words = {t.raw for t in claim_terms("None of the tests needs at least 15 units only if the firm asks before")}
    assert not words & {"None", "least", "only"} and "before" in words


def test_who_and_which_comes_first_are_never_a_restatement_s_own_words():
    """At a restatement's score the claim's other words may be the sentence's own, but not a party ("the
    applicant's program" for FDA's) and not an order ("before the group concurs" where the sentence does not say)."""
    stated = ("Under FDA's DQST compliance program, the survey assignment is issued at the beginning of the fiscal "
              "year, concurred by the WG and approved by ORA.")
    assert _verdict(stated, SURVEY, 0.9) == "pass"
    assert _verdict(stated.replace("FDA's", "the applicant's"), SURVEY, 0.9) != "pass"
    assert _verdict("Under FDA's DQST compliance program, the survey assignment is issued at the beginning of the "
                    "fiscal year before the WG concurs.", SURVEY, 0.9) != "pass"
    early = "FDA generally does not intend to provide preliminary written comments before an MCRM"
    assert _verdict(early, "In general, FDA does not intend to provide preliminary written comments in advance of an "
                           "MCRM.", 0.9) == "pass"
