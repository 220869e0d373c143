"""The extractive backend's general answer rules, each on small hand-made evidence (no servers)."""

import json

from citestream.assembly.evidence import render_evidence
from citestream.llm import ExtractiveBackend
from citestream.llm.extractive import focus_terms, required_unit, spelled_as_evidence
from citestream.models.assembly import SelectedEvidence
from citestream.policy import PROMPT_REFUSAL_LOCK
from citestream.prompt import render_prompt
from citestream.text import content_terms, split_sentences
from citestream.validation import grounding


def answer(question: str, *texts: str, pdfs: tuple[str, ...] = ()) -> list[dict] | None:
    """The backend's rows for ``question`` over one chunk per text; None when it refuses."""
    selected = [SelectedEvidence(chunk_id=f"c{i}", knowledge_id=f"k{i}", rank=i, similarity_score=0.5,
                                 citation_anchor=f"C{i}", sanitized_text=text,
                                 pdf=pdfs[i] if i < len(pdfs) else "guide.pdf", page=1 + i)
                for i, text in enumerate(texts)]
    raw = ExtractiveBackend().complete(render_prompt(render_evidence(selected), question)).text
    return None if raw == PROMPT_REFUSAL_LOCK else json.loads(raw)["answer_sentences"]


def said(rows: list[dict] | None) -> str:
    assert rows is not None, "refused"
    return " ".join(r["sentence"] for r in rows)


def test_a_time_question_prefers_the_sentence_with_a_duration():
    rows = answer("How quickly must the applicant notify FDA after a patent action is filed?",
                  "The applicant must notify FDA in writing after a patent action is filed against the applicant. "
                  "The applicant must notify FDA in writing within 14 days of the filing of any patent action.")
    assert "within 14 days" in said(rows) and "against the applicant" not in said(rows)


def test_a_definition_question_prefers_the_sentence_written_as_a_definition():
    rows = answer("How does the guidance define bioavailability?",
                  "Bioavailability studies in the guidance are important for bioavailability programs of sponsors. "
                  "Bioavailability means the rate and extent to which the active ingredient is absorbed.")
    assert said(rows).startswith("Bioavailability means")


def test_a_cited_provision_is_one_term_so_its_neighbour_does_not_answer_for_it():
    assert {"505(b)(2)", "314.94(a)(8)", "q8(r2)"} <= content_terms("505(b)(2) and 21 CFR 314.94(a)(8) under ICH Q8(R2)")
    rows = answer("What distinguishes a 505(b)(2) application from a stand-alone NDA?",
                  "A 505(b)(1) application, also known as a stand-alone NDA, is an application that contains full "
                  "reports of investigations of safety and effectiveness conducted by the applicant. "
                  "A 505(b)(2) application is an NDA in which some of the information needed for approval comes "
                  "from studies not conducted by or for the applicant.")
    assert said(rows).startswith("A 505(b)(2) application")


def test_a_definition_must_define_what_was_asked_about():
    rows = answer("What is a design space?",
                  "This guidance is a revision of the design space guidance published in May 2006. "
                  "Design Space: The multidimensional combination of input variables that assures quality.")
    assert said(rows).startswith("Design Space: The multidimensional")


def test_a_word_in_ss_meets_its_plural():
    assert content_terms("process business access") == content_terms("processes businesses accesses")


def test_front_matter_never_answers():
    boilerplate = ("This guidance represents the current thinking of the Food and Drug Administration on "
                   "bioresearch monitoring. It does not establish any rights for any person.")
    assert answer("Why was the bioresearch monitoring program established?", boilerplate) is None
    rows = answer("Why was the bioresearch monitoring program established?", boilerplate,
                  "The bioresearch monitoring program was established to assess the integrity of study data.")
    assert "assess the integrity" in said(rows) and "current thinking" not in said(rows)


def test_a_lead_in_brings_its_list_items_and_they_validate():
    text = ("FDA should inspect the validation of a new product within the first year if any of the following "
            "conditions apply: a. the new drug is the first produced by the site; b. the firm has had previous "
            "problems validating a similar process; c. the process has inherently variable unit operations; or, "
            "d. the product is made by equipment that is substantially different from equipment used before by "
            "the firm for other products of a similar kind and this sentence keeps going to exceed eighty words "
            "so that the run-on is split after its semicolons and colons into clauses of its own.")
    rows = answer("When should FDA inspect the validation of a new product?", text)
    body = said(rows)
    assert "following conditions apply:" in body and "first produced by the site" in body
    assert "previous problems validating" in body
    for part in body.split(" [C0]"):
        if part.strip():
            assert grounding(part, text).supported, part


def test_a_which_question_about_something_the_evidence_never_names_is_refused():
    text = "Part 11 requires audit trails for electronic records that are secure, computer generated and time stamped."
    assert answer("Which blockchain ledger does the Part 11 guidance require for audit trails?", text) is None
    assert answer("Which audit trails does Part 11 require for electronic records?", text) is not None
    assert focus_terms("Which blockchain ledger does FDA require?") == {"blockchain", "ledger"}
    assert focus_terms("In what year was PDUFA passed?") == set()  # an answer-type word, not a subject
    assert focus_terms("In which situations must FDA decide?") == set()


def test_a_question_whose_answer_needs_a_unit_is_refused_when_no_sentence_states_it():
    fee = "GDUFA refers to the generic drug user fee program codified in the amendments of 2012 and 2017."
    assert answer("What is the GDUFA application fee, in US dollars, for filing an ANDA?", fee) is None
    assert "$176,237" in said(answer("What is the GDUFA application fee for filing an ANDA?",
                                     fee + " The GDUFA application fee for filing an ANDA is $176,237."))
    thresholds = "Recommended qualification thresholds3 for degradation products depend on the maximum daily dose."
    assert answer("What qualification threshold percentage applies to degradation products?", thresholds) is None
    assert answer("What qualification threshold percentage applies to degradation products?",
                  thresholds + " The qualification threshold for degradation products is 0.2 percent.") is not None
    volunteers = "The typical number of healthy volunteers used in Phase 1 studies varies by drug."
    assert answer("How many healthy volunteers must a Phase 1 study enrol?", volunteers) is None
    assert answer("How many healthy volunteers must a Phase 1 study enrol?",
                  volunteers + " A Phase 1 study enrols 20 to 80 healthy volunteers.") is not None
    dated = "Part 11 controls apply to systems changed since August 20, 1997, including electronic signatures."
    assert answer("How often must passwords for Part 11 electronic signatures be changed?", dated) is None
    assert required_unit("Which guidance covers GDUFA user fees?") is None  # about a fee, not asking an amount
    assert answer("How many days does FDA take to decide on filing?",  # a time unit: the time rule decides
                  "FDA decides on filing an application within 60 days of receipt.") is not None


def test_a_typo_is_read_as_the_evidence_spelling():
    assert spelled_as_evidence({"bioavailabilty", "define"}, {"bioavailability", "rate"}) == {
        "bioavailability", "define"}
    rows = answer("How does FDA defin bioavailabilty?",
                  "Bioavailability means the rate and extent to which the active ingredient is absorbed.")
    assert "rate and extent" in said(rows)


def test_short_typos_are_read_as_the_evidence_spells_them():
    """Typos early in a word ("sytem", "efective") share no six-letter prefix: the edit-distance rule of the
    retrieve stage, applied to the evidence's words, reads them."""
    rows = answer("What is the efective date that defnes a legacy sytem under the rule?",
                  "The rule treats legacy records differently from new records. "
                  "The effective date that defines such a system is August 20, 1997.")
    assert said(rows).startswith("The effective date")


def test_the_document_named_in_the_question_counts_for_its_own_sentences():
    rows = answer("What is a design space according to ICH Q8?",
                  "Design space is the combination of input variables shown to assure quality.",
                  "ICH Q8 and ICH Q11 are cited in the design space annex of other documents.",
                  pdfs=("ICH_Q8_Pharmaceutical_Development.pdf", "Q11_Guideline.pdf"))
    assert rows[0]["chunk_id"] == "c0"


def test_leading_line_numbers_are_left_out_of_the_quote():
    rows = answer("What must the applicant compare its generic drug formulation to?",
                  "28 196 Similarly, the applicant must compare its proposed generic drug formulation to the RLD.")
    assert said(rows).startswith("Similarly, the applicant")


def test_a_footnote_mark_after_a_full_stop_ends_the_sentence():
    assert split_sentences("received by the NDA holder.29 Applicants also must notify FDA.") == [
        "received by the NDA holder.29", "Applicants also must notify FDA."]
    assert split_sentences("notify FDA in writing.”30 Such notice must. See 21 CFR 314.96 The end.") == [
        "notify FDA in writing.”30", "Such notice must.", "See 21 CFR 314.96 The end."]


def test_a_verbatim_quote_is_grounded_unless_negated_just_before():
    source = "It is not the case that the firm has had previous problems. The firm uses validated equipment, or not."
    assert not grounding("the firm has had previous problems", source).supported
    assert grounding("The firm uses validated equipment", source).supported
