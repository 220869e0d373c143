"""What an answer is quoted from (``text.read_units``): headings, table-of-contents lines, section-number lists and
questions are never answer sentences; a sentence that refers to a subject said before is also read with it."""

import pytest

from citestream.core.text_units import heading_end, is_label, read_units


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
