"""The claim judge on the constructions a false claim is made of, with the real models (no servers needed).

Each case is one sentence in a pack and claims built from it: a restatement passes; the same claim with its
polarity flipped, its actor swapped, a number, unit or restrictor changed never does. Where the sentence states the
opposite (polarity, actor) the verdict is ``fail``; a claim the sentence does not speak to is ``unclear``. The
sentences are written for these tests, not taken from the golden sets.
"""

import pytest

from citestream.core.clauses import clauses
from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.verification import RelevanceJudge
from citestream.verification.structure import participants, structural_conflict


@pytest.fixture(scope="module")
def judge(claim_relevance):
    """The judge as the product runs it: the claim judge's cross-encoder blended with the relevance embedder at the
    claim weight, asked with its prefix."""
    return RelevanceJudge(claim_relevance)


def verdict(judge, claim: str, sentence: str) -> str:
    pack = GroundingPack(chunks=[GroundingChunk(chunk_id="c1", doc_id="d1", text=sentence, score=0.9,
                                                metadata={"pdf": "Guidance.pdf", "page": 1, "authority": "FDA"})])
    return judge.judge(Claim(id="c", text=claim), pack).verdict


SELECTS = "FDA selects the reference standard that applicants must use in bioequivalence studies."
NOT_A_CHANGE = "A change in the supplier of a compendial excipient is not considered a major change."
NEED_NOT = "The sponsor need not submit the curriculum vitae of each investigator to FDA."
CONSENT = "The investigator must obtain informed consent from each subject before enrollment."
DEADLINE = "Applicants must notify FDA within 30 days of the first commercial marketing of the drug."
BATCHES = "Stability data should be provided for at least three primary batches of the drug product."


@pytest.mark.parametrize("claim,sentence", [
    ("FDA chooses the reference standard that applicants must use in bioequivalence studies", SELECTS),
    ("Changing the supplier of a compendial excipient is not regarded as a major change", NOT_A_CHANGE),
    ("Sponsors do not need to submit the curriculum vitae of each investigator to FDA", NEED_NOT),
    ("Before enrollment, the investigator must obtain informed consent from each subject", CONSENT),
    ("Applicants must tell FDA within 30 days of the drug's first commercial marketing", DEADLINE),
    ("Stability data should cover at least three primary batches of the drug product", BATCHES),
])
def test_a_restatement_passes(judge, claim, sentence):
    assert verdict(judge, claim, sentence) == "pass"


@pytest.mark.parametrize("claim,sentence", [
    ("The applicant selects the reference standard used in bioequivalence studies", SELECTS),
    ("The reference standard used in bioequivalence studies is selected by the applicant", SELECTS),
    ("The sponsor must obtain informed consent from each subject before enrollment", CONSENT),
    ("A change in the supplier of a compendial excipient is considered a major change", NOT_A_CHANGE),
    ("The sponsor must submit the curriculum vitae of each investigator to FDA", NEED_NOT),
], ids=["actor", "actor-passive", "sponsor-for-investigator", "is-considered", "need-not"])
def test_a_claim_the_sentence_contradicts_fails(judge, claim, sentence):
    assert verdict(judge, claim, sentence) == "fail"


@pytest.mark.parametrize("claim,sentence", [
    ("FDA considers a change in the supplier of a compendial excipient a major change", NOT_A_CHANGE),
    ("Applicants must notify FDA within 60 days of the first commercial marketing of the drug", DEADLINE),
    ("Applicants must notify FDA within 30 months of the first commercial marketing of the drug", DEADLINE),
    ("Stability data should be provided for no more than three primary batches of the drug product", BATCHES),
    ("Stability data should be provided for only one primary batch of the drug product", BATCHES),
    ("Stability data should be provided for all batches of the drug product", BATCHES),
], ids=["does-consider", "number", "unit", "restrictor-bound", "restrictor-only", "restrictor-all"])
def test_a_changed_claim_never_passes(judge, claim, sentence):
    assert verdict(judge, claim, sentence) != "pass"


def test_a_claim_the_sentence_does_not_speak_to_is_unclear(judge):
    assert verdict(judge, "FDA charges a user fee for each reference standard it selects", SELECTS) == "unclear"


# ------------------------------------------------------------------------------ the parse the judge reads


def test_who_does_it_is_read_in_active_passive_and_participle_clauses():
    def doers(text: str, predicate: str) -> set[str]:
        return {a for c in clauses(text, "FDA") if c.predicate == predicate for a in c.agents}

    assert doers("The applicant selects the reference standard.", "select") == {"applicant"}
    assert doers("The reference standard is selected by FDA.", "select") == {"fda"}
    assert doers("Applicants must use the reference standard selected by FDA.", "select") == {"fda"}
    assert doers("We select the reference standard.", "select") == {"fda"}        # a guidance's "we"
    assert doers("FDA intends to select a reference standard.", "select") == {"fda"}


@pytest.mark.parametrize("sentence,predicate", [
    ("FDA does not consider this a change.", "consider"),
    ("No approval by regional authorities is required for such movements.", "require"),
    ("Applicants need not submit the batch records.", "submit"),
    ("It is not necessary to determine the LD50 of an excipient.", "determine"),
    ("Movements within the design space, which do not require approval, are allowed.", "require"),
])
def test_negation_is_read_in_the_clause_it_belongs_to(sentence, predicate):
    assert any(c.negated for c in clauses(sentence) if c.predicate == predicate)


def test_negation_elsewhere_in_the_sentence_is_not_the_claims():
    sentence = "Movement out of the design space is considered to be a change, but working within it is not."
    assert structural_conflict("Movement out of the design space is considered a change", sentence) is None


def test_the_claims_doers_and_subjects_are_what_it_is_about():
    assert participants("The applicant selects the reference standard") == {"applicant"}
    assert participants("The reference standard is selected by FDA", "FDA") == {"standard", "fda"}


def test_whether_or_not_negates_nothing_and_every_all_each_are_one_restrictor():
    from citestream.verification.checks import negated, negated_where
    from citestream.verification.terms import claim_terms, missing_terms

    assert not negated("FDA determines whether or not the request should be granted")
    assert not negated_where("FDA determines whether or not the request should be granted, and the format",
                             "FDA decides whether to grant the request")
    assert not missing_terms(claim_terms("every strength"), "all strengths")
    assert missing_terms(claim_terms("only sterile processes"), "sterile and non-sterile processes")


def test_a_subjects_qualifiers_are_read_so_a_claim_cannot_swap_them():
    """Issue 47 made "... the commercial scale process appears to make acceptable product" one whole sentence; its
    false twin "the pilot scale process" must then be told apart by the words that restrict the subject, which a
    restatement may not change (claims_corpus CX08)."""
    from citestream.core.clauses import subject_qualifiers

    claim = "Conformance batches are prepared to demonstrate that the pilot scale process appears to make product"
    assert {"pilot", "scale"} <= subject_qualifiers(claim)
    assert "commercial" in subject_qualifiers("The commercial scale process appears to make acceptable product.")
