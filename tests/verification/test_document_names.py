"""A claim may name the document its sentence comes from (issue 52): "Under 21 CFR Part 820, ...", "According to
ICH Q9, ...", "PI 044-1 applies to ...". Those words are not asked of the sentence when they name the sentence's
own document (file name, title, issuer, section heading); a claim naming another document is not passed.

The relevance model is replaced by a constant score above the paraphrase threshold, so only the rules decide:
names, numbers, parties and conflicts.
"""

from __future__ import annotations

import pytest

from citestream.models.retrieval import GroundingChunk, GroundingPack
from citestream.models.verdicts import Claim
from citestream.verification.checks import exception_conflict
from citestream.verification.documents import DocumentName, mentions, without
from citestream.verification.relevance_judge import RelevanceJudge
from citestream.verification.terms import claim_terms, missing_terms


class _Sure:
    """Every sentence restates the claim (0.9): what is left to decide is what the rules check."""

    def score(self, claim: str, units: list[str]) -> list[float]:
        return [0.9] * len(units)


CFR820 = dict(pdf="21_CFR_Part_820_up_to_date_as_of_2-12-2026.pdf",
              title="PART 820—QUALITY MANAGEMENT SYSTEM REGULATION", issuer="FDA", authority="FDA",
              section="Subpart A—General Provisions § 820.1 Scope.")
PICS = dict(pdf="pi-044-1-pics-gdp-aide-memoire.pdf", issuer="PIC/S", authority="MIXED", section="SCOPE",
            title="PHARMACEUTICAL INSPECTION CONVENTION PHARMACEUTICAL INSPECTION CO-OPERATION SCHEME")
Q9 = dict(pdf="Q9_Guideline.pdf", title="ICH E10", issuer="ICH", authority="ICH", section="")
Q11 = dict(pdf="Q11_Guideline.pdf", title="Q11 Development and Manufacture of Drug Substances", issuer="ICH",
           authority="ICH", section="")

CFR820_SENTENCE = ("The provisions of this part do not apply to manufacturers of components or parts of finished "
                   "devices, but such manufacturers are encouraged to consider provisions of this regulation as "
                   "appropriate.")
PICS_SENTENCE = ("SCOPE 4.1 This document applies to any entity, who holds a wholesale distribution licence in "
                 "accordance with national legislation.")
RISK_SENTENCE = "A quantitatively expressed risk uses a numerical probability."


def _pack(sentence: str, doc: dict) -> GroundingPack:
    meta: dict = dict(doc)
    chunk_id = doc["pdf"].removesuffix(".pdf") + "-chunk-1"
    return GroundingPack(chunks=[GroundingChunk(chunk_id=chunk_id, doc_id=chunk_id, text=sentence, score=0.9,
                                                metadata=meta)])


def _verdict(claim: str, sentence: str, doc: dict) -> str:
    return RelevanceJudge(_Sure()).judge(Claim(id="c", text=claim), _pack(sentence, doc)).verdict


def _name(doc: dict) -> DocumentName:
    return DocumentName.of(doc["pdf"], doc["title"], doc["issuer"], doc["authority"], doc["section"])


@pytest.mark.parametrize("claim, sentence, doc", [
    ("Under 21 CFR Part 820, manufacturers of components or parts of finished devices are not subject to the QMSR.",
     CFR820_SENTENCE, CFR820),                       # file name, section, title acronym (QMSR)
    ("Under 21 CFR 820.1, manufacturers of components or parts of finished devices are not subject to the QMSR.",
     CFR820_SENTENCE, CFR820),                       # the section the sentence is under
    ("In ICH Q9, a quantitatively expressed risk uses a numerical probability.", RISK_SENTENCE, Q9),
    ("PI 044-1 applies to any entity holding a wholesale distribution licence under national legislation.",
     PICS_SENTENCE, PICS),                           # the document as the doer: "This document applies"
])
def test_a_true_claim_naming_its_own_document_passes(claim, sentence, doc):
    assert _verdict(claim, sentence, doc) == "pass"


@pytest.mark.parametrize("claim, sentence, doc", [
    ("Under 21 CFR Part 11, manufacturers of components or parts of finished devices are not subject to the QMSR.",
     CFR820_SENTENCE, CFR820),                       # another part
    ("Under 21 CFR 820.35, manufacturers of components or parts of finished devices are not subject to the QMSR.",
     CFR820_SENTENCE, CFR820),                       # another section
    ("In ICH Q11, a quantitatively expressed risk uses a numerical probability.", RISK_SENTENCE, Q9),
    ("In ICH Q9, a quantitatively expressed risk uses a numerical probability.", RISK_SENTENCE, Q11),
    ("In ICH E10, a quantitatively expressed risk uses a numerical probability.", RISK_SENTENCE, Q9),  # a wrong title
    ("PI 045-1 applies to any entity holding a wholesale distribution licence under national legislation.",
     PICS_SENTENCE, PICS),
])
def test_a_claim_naming_another_document_does_not_pass(claim, sentence, doc):
    assert _verdict(claim, sentence, doc) != "pass"


def test_the_document_as_doer_keeps_its_polarity():
    claim = "PI 044-1 does not apply to any entity holding a wholesale distribution licence under national legislation."
    assert _verdict(claim, PICS_SENTENCE, PICS) == "fail"


def test_the_term_rule_asks_the_sentence_for_no_word_of_its_own_documents_name():
    claim = "According to the PIC/S GDP aide-memoire, this document applies to any entity holding a licence."
    found = mentions(claim, _name(PICS))
    assert [m.text for m in found] == ["PIC/S GDP aide-memoire"]
    before = {t.raw for t in missing_terms(claim_terms(claim), PICS_SENTENCE)}
    after = {t.raw for t in missing_terms(claim_terms(without(claim, found)), PICS_SENTENCE)}
    assert {"PIC", "GDP", "aide-memoire"} <= before and not after & {"PIC", "GDP", "aide-memoire"}


@pytest.mark.parametrize("claim, doc", [
    ("According to the PIC/S GDP Guide, products are supplied.", PICS),  # the Guide is another document
    ("The aide-memoire is voluntary guidance for GDP inspectors.", PICS),  # words of a topic, not a name
    ("Tables list items to examine during a GDP inspection.", PICS),
    ("Under ICH Q8(R2), the design space is proposed by the applicant.", Q11),
    ("Collect 2 units when the container holds 12 grams.", CFR820),  # numbers of the file name are no code alone
])
def test_no_mention_of_the_document(claim, doc):
    assert not mentions(claim, _name(doc))


def test_a_claim_without_the_evidences_exception_conflicts():
    sentence = ("The PIC/S GDP Guide is legally non-binding unless it has been declared a legal standard in the "
                "jurisdiction of a Participating Authority.")
    assert exception_conflict("The PIC/S GDP Guide stays non-binding even after a Participating Authority has "
                              "declared it a legal standard.", sentence)
    assert not exception_conflict("The PIC/S GDP Guide is non-binding unless it has been declared a legal "
                                  "standard.", sentence)
