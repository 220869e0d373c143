"""What an answer is quoted from (``text.read_units``): headings, table-of-contents lines, section-number lists and
questions are never answer sentences; a sentence that refers to a subject said before is also read with it."""

import pytest

from citestream.core.text_units import (LIST_MAX_WORDS, continues, heading_end, is_label, read_units, sentence_units,
                                       split_sentences)


@pytest.mark.parametrize("line", [
    "Electronic Signatures (21 CFR Part 11).2",                                   # a heading
    "Justification of Starting Material Selection for Synthetic Drug Substances (5.2.1)",
    "A. Safety Pharmacology ..............4 B. Potential Excipients ..........5",  # a table of contents
    "§ 11.10 (e), (k)(2) and 11.30",                                              # section references
    "Who reviews new drug submissions?",                                          # a question asks, not says
])
def test_labels_are_never_answer_sentences(line):
    assert is_label(line)
    assert read_units(line) == ()


def test_a_sentence_is_not_a_label():
    assert not is_label("FDA recommends against submitting a scanned PDF copy of the QOS.")
    assert not is_label("The CPG reference may be found at Sec. 638.100 (7125.38).")


def test_a_heading_glued_to_its_paragraph_is_its_subject_not_its_quote():
    text = ("Potential Excipients Intended for Short-Term Use We recommend that the safety evaluation of new "
            "excipients for short clinical use include at least the following studies.")
    cut = heading_end(text)
    assert text[cut:].startswith("We recommend")
    (unit,) = read_units(text)
    assert unit.quote.startswith("We recommend")
    assert unit.readings == (unit.quote, f"Potential Excipients Intended for Short-Term Use: {unit.quote}")
    # a sentence that opens with a name is not a heading
    assert heading_end("ICH Q8 Pharmaceutical Development Guideline recommends that the applicant do it.") == 0


def test_a_heading_on_a_line_of_its_own_is_cut_off_whatever_word_opens_the_sentence():
    # the demo's smoke documents and "3.2.1 ECs Definition ECs are ...": no function word opens the sentence, the
    # line break says where the heading ends; the sentence after it reads its subject without the heading
    text = ("Lecanemab in Early Alzheimer's\nLecanemab, an anti-amyloid-beta antibody, demonstrated a 27% reduction "
            "in cognitive decline. The drug targets soluble amyloid-beta protofibrils.")
    first, second = read_units(text)
    assert first.quote.startswith("Lecanemab, an anti-amyloid-beta antibody")
    assert first.readings[1] == f"Lecanemab in Early Alzheimer's: {first.quote}"
    assert second.readings[1] == f"Lecanemab: {second.quote}"
    # stacked headings: the section's (cut by heading_end) and its subsection's line
    stacked = read_units("4. KNOWLEDGE AND RISK MANAGEMENT\n4.1 Knowledge Management\nAs with product development, "
                         "knowledge management plays a critical role.")
    assert [u.quote for u in stacked] == ["As with product development, knowledge management plays a critical role."]


def test_a_numbered_heading_is_cut_off_though_the_sentence_splitter_took_its_number():
    # "C." ends a sentence for the splitter, so the unit opens with the heading's words, not with its line
    (unit,) = read_units("C. Labeling Format\nFDA requests that labeling be submitted in Microsoft Word and PDF files.")
    assert unit.quote.startswith("FDA requests")
    assert unit.readings[1] == f"Labeling Format: {unit.quote}"
    # a heading, then the next heading's number on the line after: no sentence, never quoted
    text = ("VI. RESCHEDULING AND CANCELING MEETINGS\nA. Rescheduled Meetings\nOccasionally, circumstances may "
            "arise that necessitate the rescheduling of a meeting.")
    assert [u.quote for u in read_units(text)] == [
        "Occasionally, circumstances may arise that necessitate the rescheduling of a meeting."]
    assert [u.quote for u in read_units("3. Pre-Submission Meeting Request Summary\na.\nThe summary should state "
                                        "the product.")] == ["The summary should state the product."]
    # an opener with its comma ends a run-in heading; a heading line that opens a bracket is not all of the heading
    assert read_units("1. Package Type Generally, labeling must be the same as the RLD's labeling.")[0].quote == (
        "Generally, labeling must be the same as the RLD's labeling.")
    # the heading line wins over a function word inside it ("... of Not Using a TPP ..."), and after it a run-in
    # heading is cut as well
    (case,) = read_units("D. Disadvantages of Not Using a TPP Early in Development\nA sponsor developed a new "
                         "molecular entity whose target was similar to approved agents.")
    assert case.quote.startswith("A sponsor developed")
    (entry,) = read_units("Lot Number Definitions\nManufacture All operations of receipt of materials and production "
                          "of APIs.")
    assert entry.quote.startswith("All operations")
    cited = read_units("2. Introductory Statement and General Plan [21 CFR\n312.23(a)(3)]: Regulations describe "
                       "this section as brief.")
    assert not cited[0].quote.startswith("312.23")


def test_a_sentence_never_ends_inside_a_bracket_or_a_quotation_it_opened():
    # "Ref. 15" and "Feb. 12" read as sentence ends before a digit; ";" inside a title read as one before a capital
    text = ("Particles can contaminate a product biologically by acting as a vehicle for microorganisms (Ref. 2). "
            "Manufacturers should refer to the \u201cPart 11, Electronic Records; Electronic Signatures \u2013 Scope "
            "and Application\u201d guidance when applying Part 11. The rule was amended (Feb. 12, 2026) to cite ISO.")
    assert [u.quote for u in read_units(text)] == [
        "Particles can contaminate a product biologically by acting as a vehicle for microorganisms (Ref. 2).",
        "Manufacturers should refer to the \u201cPart 11, Electronic Records; Electronic Signatures \u2013 Scope and "
        "Application\u201d guidance when applying Part 11.",
        "The rule was amended (Feb. 12, 2026) to cite ISO."]
    # a bracket that does not close within the next two pieces is a stray: the sentences stay apart
    stray = "Report the results (see below. Each lot is tested. Each site is listed. Each report is signed."
    assert len(sentence_units(stray)) == 4
    # a quotation too long for one unit stays in its sentences, each still quotable
    long = ("21 CFR 211.22(a) states that \u201cThere shall be a quality control unit " + "that reviews records, " * 25
            + "as required. The quality control unit shall approve or reject drug products made under contract.\u201d")
    assert read_units(long)[-1].quote == ("The quality control unit shall approve or reject drug products made under "
                                          "contract.\u201d")


def test_a_table_row_keeps_its_header_and_a_heading_line_never_cuts_a_sentence_in_two():
    row = "Release Tests\nTest: Assay | Limit: 95.0 to 105.0 percent of label claim."
    assert read_units(row)[0].quote.startswith("Release Tests Test: Assay |")
    # a sentence that opens with the heading's words is not cut: what would follow is no sentence ("units must")
    text = "Quality Control\nThe firm must test every batch. Quality Control units must review every batch record."
    assert [u.quote for u in read_units(text)] == [
        "The firm must test every batch.", "Quality Control units must review every batch record."]


def test_a_sentence_that_refers_back_is_also_read_with_its_subject():
    text = ("Lecanemab, an anti-amyloid-beta antibody, demonstrated a 27% reduction in cognitive decline. "
            "The drug targets soluble amyloid-beta protofibrils and received accelerated approval.")
    first, second = read_units(text)
    assert first.readings == (first.quote,)
    assert second.readings == (second.quote, f"Lecanemab: {second.quote}") and second.about
    faq = "Who reviews new drug submissions? A team of CDER physicians and chemists review the sponsor's data."
    (answer,) = read_units(faq)
    assert answer.readings[1].startswith("Who reviews new drug submissions?: A team")
    plain = read_units("The applicant submits the form. The underlying requirements are in the Act itself.")
    assert not plain[1].about  # "The applicant ..." opens with a function word, not a name


def test_a_sentence_whose_opening_clause_refers_back_continues_the_one_before():
    assert continues("If this occurs, the investigator should use the Override feature.")
    assert continues("In such cases, a second sample is collected.")
    assert continues("These include the batch record.")  # a reference word first: refers_back
    assert not continues("If the firm refuses, the investigator notes it.")  # no reference in the clause
    assert not continues("The firm collects the sample, and this is recorded.")  # the reference is past the clause


@pytest.mark.parametrize("text, sentence", [
    # the and the judged sample's headings glued to the sentence under them, as the PDFs print them
    ("Reporting The store manager reports every deviation to quality assurance.", "The store manager"),
    ("BACKGROUND In March of 1997, FDA issued final part 11 regulations.", "In March of 1997"),
    ("Established Conditions (ECs) (Chapter 3) The concept of ECs provides a clear understanding.", "The concept"),
    ("Viral safety Where applicable, information assessing the risk should be provided.", "Where applicable"),
    ("Storage, logistics and distribution conditions To assess the adequacy of arrangements for storage.",
     "To assess"),
    ("The Role of an RLD in an ANDA The RLD is the listed drug to which the applicant refers.", "The RLD is"),
    ("Subpart A-General Provisions § 211.1 Scope (a) The regulations in this part contain the minimum practice.",
     "(a) The regulations"),
    ("Single-Dose and Multiple-Dose (Steady-State) Testing Consistent with the regulations, we recommend it.",
     "Consistent with"),
    ("Using a TPP During Development of an Antibacterial Drug From 1999-2001, the Division piloted a TPP.",
     "From 1999-2001"),
    ("Traceability of pharmaceutical products 8.9 Regulations should foster a safe and secure distribution system.",
     "8.9 Regulations"),
    # a run-in heading in capitals, closed by a colon (the DQST program, CPG Sec. 490.100)
    ("REPORTING INSTRUCTIONS: All testing activities conducted under this program should be reported.", "All testing"),
    ("BACKGROUND: This Compliance Policy Guide (CPG) explains the policy of the Center.", "This Compliance Policy"),
])
def test_a_heading_in_any_case_is_cut_off_the_sentence_it_was_glued_to(text, sentence):
    cut = heading_end(text)
    assert cut and text[cut:].startswith(sentence)
    (unit,) = read_units(text)
    assert unit.quote.startswith(sentence) and unit.about


@pytest.mark.parametrize("text", [
    "ICH Q8 Pharmaceutical Development Guideline recommends that the applicant do it.",
    "See guidance for industry Variations in Drug Products that May Be Included in a Single ANDA (December 1998).",
    "Basis of Submission for a Generic Drug That Is a Duplicate of a Drug Product Approved in a Petitioned ANDA.",
    "As described in the guidances for industry For the Submission of Documentation for Sterilization.",
    "(iii) The drug product's steady-state performance is equivalent to that of the reference product.",
    "Guidance on Drugs In Development describes what sponsors submit at each stage of development.",
    "The applicant submits the form in May the year after approval, as the rule says.",
    "Table 2.1 Summary of the validation characteristics that each kind of procedure needs.",
    "The limit is 0.5 Percent of the total amount of the drug substance in the product.",
    "FDA: The agency reviews the application within the time the statute sets.",  # a short acronym, not shouted
    "Assay: The result must lie within the limits the specification sets for the batch.",  # not in capitals
    "TEST: Assay | LIMIT: 95.0-105.0% | METHOD: HPLC as described in the monograph",  # a table row keeps its header
])
def test_titles_cross_references_and_list_markers_are_not_headings(text):
    assert heading_end(text) == 0


def test_a_section_of_the_code_opens_a_new_unit_and_its_title_is_never_quoted():
    text = ("Deviation from this requirement is permitted if such deviation is temporary. § 211.87 Retesting of "
            "approved components, drug product containers, and closures. Components shall be retested as needed. "
            "§ 211.56 Sanitation. (a) Any building used in the manufacture of a drug product shall be clean.")
    quotes = [u.quote for u in read_units(text)]
    assert quotes == ["Deviation from this requirement is permitted if such deviation is temporary.",
                      "Components shall be retested as needed.",
                      "(a) Any building used in the manufacture of a drug product shall be clean."]


SERVICING = ("(b) Records of servicing activities. In adhering to Clause 7.5.4 in ISO 13485, the manufacturer must "
             "record the following information, at a minimum, for servicing activities:\n"
             "(1) The name of the device serviced;\n(2) Any UDI or UPC;\n(3) The date of service;\n"
             "(4) The individual(s) who serviced the device;\n(5) The service performed; and\n"
             "(6) Any test and inspection data.\n(c) Unique Device Identification. "
             "The UDI must be recorded for each medical device or batch of medical devices.")


def test_a_lead_in_and_its_list_are_one_unit_read_item_by_item():
    quotes = [u.quote for u in read_units(SERVICING)]
    listed = next(u for u in read_units(SERVICING) if u.quote.startswith("In adhering"))
    # the lead-in is quoted with every item, never alone or with its first item only (21 CFR 820.35(b))
    assert listed.quote.endswith("(5) The service performed; and (6) Any test and inspection data.")
    assert not any(q.startswith("(4)") for q in quotes)
    assert quotes[-1] == "The UDI must be recorded for each medical device or batch of medical devices."
    # the judge also reads each item after its lead-in, so the item that answers is found and read on its own
    assert any(r.endswith("for servicing activities: (1) The name of the device serviced; "
                          "(4) The individual(s) who serviced the device;") for r in listed.readings)


def test_a_list_stays_split_when_whole_it_would_be_no_sentence_or_no_quote():
    # items that are sentences each stay units: an answer cites every sentence
    sentences = "The firm should test:\nThe first batch. The second batch is kept for a year."
    assert sentence_units(sentences) == ("The firm should test: The first batch.",
                                         "The second batch is kept for a year.")
    # longer than the judge reads whole with a question: split into items, as before
    long_list = "Records must include:\n" + "\n".join(f"({i}) item number {i} of the list with words;" for i in
                                                   range(1, LIST_MAX_WORDS // 7 + 2)) + "\n(99) the end."
    assert len(sentence_units(long_list)) > 2
    # a marker between two items that the units leave out: joined, the unit would quote words that are not there
    marked = "Records must include: a. the name of the device; b. the date it was received; c. the reply."
    assert all(" ".join(u.split()) in " ".join(marked.split()) for u in sentence_units(marked))


def test_items_that_are_sentences_leave_their_lead_in_whole_not_glued_to_the_first():
    # Clinical_Pharmacology_Bioavailability_Studies.pdf, appendix C: glued, the lead-in quoted the first point only
    text = ("The following points should be considered during the evaluation of dose dumping:\n"
            "• Dissolution testing should be conducted using the optimal apparatus. Data should come from 12 units.\n"
            "• The following alcohol concentrations are recommended: 0, 5, 20, and 40 percent.")
    assert sentence_units(text) == (
        "The following points should be considered during the evaluation of dose dumping:",
        "Dissolution testing should be conducted using the optimal apparatus.", "Data should come from 12 units.",
        "The following alcohol concentrations are recommended: 0, 5, 20, and 40 percent.")


def test_a_symbol_fonts_bullets_and_a_lone_middle_dot_open_list_items():
    # Q7_Guideline.pdf 6.30: U+F02D bullets read as one run-on, then cut at every semicolon
    q7 = ("6.30 Records should be maintained including:\n\uf02d The name of the manufacturer; the name of the "
          "supplier;\n\uf02d Records tracing the use of materials; and\n\uf02d The final decision regarding rejected "
          "materials.")
    assert sentence_units(q7) == ("6.30 Records should be maintained including: The name of the manufacturer; the "
                                  "name of the supplier; Records tracing the use of materials; and The final decision "
                                  "regarding rejected materials.",)
    assert sentence_units("Passed · Delete data: Passed") == ("Passed", "Delete data: Passed")
    assert sentence_units("The dose is 5 mg·kg per day.") == ("The dose is 5 mg·kg per day.",)  # not a bullet
    # Q12's annexes and Q13 set hollow bullets that the text layer reads as the letter "o"
    assert sentence_units("Viability is not considered an EC. o Titre is predicted through a process model.") == (
        "Viability is not considered an EC.", "Titre is predicted through a process model.")
    assert sentence_units("Strategy for start-up and pause o RTD and material traceability") == (
        "Strategy for start-up and pause", "RTD and material traceability")


def test_a_list_marker_left_after_a_word_is_not_quoted_but_a_number_ending_a_sentence_is():
    form = "Deviation from recommendations in PSG\ni. No\nii. Yes, with minor deviation (e.g., study design, etc.)"
    assert sentence_units(form)[0] == "Deviation from recommendations in PSG"
    table = "The results are shown in Table 2. The batch passed."
    assert sentence_units(table)[0] == "The results are shown in Table 2."


def test_a_numbered_paragraph_opens_a_unit_though_the_one_before_has_no_full_stop():
    # pi-044-1-pics-gdp-aide-memoire.pdf 2.1/2.2: the PDF ends paragraph 2.1 without a full stop
    gdp = ("A wholesale distributor is an operator who conducts wholesale distribution activities\n2.2 Compliance with "
           "Good Distribution Practice (GDP) by manufacturers and wholesale distributors is a key element.")
    assert [u.quote for u in read_units(gdp)] == [
        "A wholesale distributor is an operator who conducts wholesale distribution activities",
        "2.2 Compliance with Good Distribution Practice (GDP) by manufacturers and wholesale distributors is a key "
        "element."]
    # a number a word points at, or a value, opens nothing
    assert len(sentence_units("Risks are assessed as described in the quality manual section 2.2 Risk Ranking.")) == 1
    assert len(sentence_units("Parameter 2 has a range of values between 0 and 1.1 While the approach is.")) == 1
    # a paragraph's number before a sentence is left out; a section's number the sentence is about is kept
    assert sentence_units("The record is kept by the quality unit\n16.1 There should be a written procedure.")[1] == (
        "There should be a written procedure.")
    assert sentence_units("1.12.15 Contains a request to waive the requirement.") == (
        "1.12.15 Contains a request to waive the requirement.",)


def test_a_heading_set_in_capitals_is_cut_before_its_first_numbered_paragraph():
    (unit,) = read_units("INTRODUCTION 2.1 Wholesale distribution is all activities consisting of procuring goods.")
    assert unit.quote.startswith("2.1 Wholesale") and unit.about
    assert read_units("TABLE 2.1 Summary of the results for the batches tested here.")[0].quote.startswith("TABLE")


def test_a_checklists_questions_are_its_items_and_the_item_after_one_is_not_its_answer():
    """An inspection aide-memoire says what to check by asking it: two or more questions in a row are a checklist's
    items and are quoted; a lone question is a document's own (a FAQ), read as the subject of the answer after it."""
    checklist = ("Temperature control \uf0b7 Are the environmental conditions monitored and are such records "
                 "available? \uf0b7 Has temperature mapping been conducted for the storage areas? "
                 "\uf0b7 Provide temperature monitoring data for selected shipments.")
    first, second, third = read_units(checklist)
    assert first.quote == "Are the environmental conditions monitored and are such records available?"
    assert second.quote == "Has temperature mapping been conducted for the storage areas?"
    assert not second.about and third.readings == ("Provide temperature monitoring data for selected shipments.",)
    assert read_units("Who reviews new drug submissions?") == ()
    faq = read_units("Who reviews new drug submissions? A team of CDER physicians and chemists review the data.")
    assert [u.quote[:6] for u in faq] == ["A team"]


@pytest.mark.parametrize("passage, sentence", [
    ("Recalibration and model maintenance\nTracking the calibration model performance is part of ongoing monitoring.",
     "Tracking the calibration"),
    ("A. Example 1: Linking Material Attributes and Process Parameters to Drug Substance CQAs – Chemical Entity (10.1)"
     "\nThis example illustrates development of a design space using prior knowledge.", "This example"),
    ("6. Information on the chemical and pharmaceutical quality\nconcerning placebo products in clinical trials\n"
     "The quality documentation to be submitted for placebos is limited to these sections.", "The quality"),
    ("a. Over-encapsulation of clinical trial formulations\nBlinding of drug products used in clinical trials can be "
     "done by over-encapsulation.", "Blinding of"),
    ("16. Complaints\n16.1 There should be a written procedure in place for the handling of complaints.",
     "There should"),
    ("INTERNATIONAL COUNCIL FOR HARMONISATION\nICH HARMONISED GUIDELINE\nPRODUCT LIFECYCLE MANAGEMENT Q12 Annexes\n"
     "Final version\nAdopted on 20 November 2019\nThis document has been developed by the Expert Working Group.",
     "This document"),
    ("4.5 Risk Communication Risk communication is the sharing of information about risk and risk management.",
     "Risk communication is"),
])
def test_a_line_shaped_as_a_heading_in_any_case_is_cut_off_and_never_quoted_alone(passage, sentence):
    """A line that opens as a heading does and ends no sentence is a heading whatever its case or length; a heading
    wrapped onto a line in lower case is one heading; a title page stacks six. Alone on its line it is not quoted."""
    quotes = [u.quote for u in read_units(passage)]
    assert len(quotes) == 1 and quotes[0].startswith(sentence), quotes


@pytest.mark.parametrize("passage, kept", [
    ("2. The prospective applicant informs FDA that its questions have been answered by the written comments, or\n"
     "3. FDA issues product-specific guidance on establishing bioequivalence.", "written comments, or"),
    ("Timing\nANDA to be submitted within 6 to 8 months of pre-submission meeting request",
     "ANDA to be submitted within 6 to 8 months"),
    ("11.40 Authentic Certificates of Analysis should be issued for each batch of intermediate or API on request.",
     "11.40 Authentic Certificates"),
])
def test_a_list_item_that_runs_on_or_a_cell_that_says_something_is_no_heading(passage, kept):
    assert any(u.quote.startswith(kept) or kept in u.quote for u in read_units(passage))


def test_a_middle_initial_ends_no_sentence_but_an_appendix_letter_does():
    assert split_sentences("For questions contact Jeanne M. Delasko at 301-796-0900. U.S. Department of Health") == [
        "For questions contact Jeanne M. Delasko at 301-796-0900.", "U.S. Department of Health"]
    assert split_sentences("See Appendix A. Sponsors should comply. This is Group B. The end.") == [
        "See Appendix A.", "Sponsors should comply.", "This is Group B.", "The end."]


@pytest.mark.parametrize("unit", [
    "Subpart C-Buildings and Facilities § 211.42 Design and construction features.",
    "[43 FR 45077, Sept. 29, 1978, as amended at 60 FR 4091, Jan. 20, 1995] § 211.44 Lighting.",
    "Subpart B Supplemental Provisions § 820.20--§ 820.30 [Reserved] § 820.35 Control of records.",
])
def test_a_code_sections_title_after_its_subpart_or_its_history_is_a_label(unit):
    assert is_label(unit) and not read_units(unit)
