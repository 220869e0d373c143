"""Acronyms the corpus defines, and the query variant they add (qa-v1.1)."""

from citestream.retrieval.acronyms import AcronymMap, build_map
from citestream.retrieval.expansion import expand_query

DOCS = {
    "ba": "Bioavailability (BA) is assessed in vivo. BA data support the application.",
    "pat": "Process analytical technology (PAT) is a system for designing and controlling manufacturing.",
    "ind": "Paragraph IV certifications follow. The intravenous (IV) route is excluded here.",
    "ogd": "Send it to the Office of Generic Drugs (OGD) in writing.",
}


def test_definitions_are_read_from_the_documents_in_both_directions():
    acronyms = build_map(DOCS)
    assert acronyms.long_of["BA"] == "bioavailability"
    assert acronyms.long_of["PAT"] == "process analytical technology"
    assert acronyms.additions("How does FDA define bioavailability?") == ["BA"]
    assert acronyms.additions("What does ICH Q8(R2) mean by PAT?") == ["process analytical technology"]
    assert acronyms.additions("Is BA (bioavailability) measured?") == []  # both forms already there


def test_roman_numerals_and_long_forms_starting_with_a_stopword_are_not_acronyms():
    acronyms = build_map(DOCS)
    assert "IV" not in acronyms.long_of  # "Paragraph IV" must not also search "intravenous"
    assert all(not long.startswith("of ") for long in acronyms.long_of.values())


def test_an_acronym_most_documents_use_is_left_out():
    docs = {f"d{i}": "The Food and Drug Administration (FDA) reviews it. FDA decides." for i in range(4)}
    docs["pat"] = DOCS["pat"]
    acronyms = build_map(docs)
    assert "FDA" not in acronyms.long_of and "PAT" in acronyms.long_of


def test_a_long_form_inside_a_longer_one_does_not_count():
    acronyms = AcronymMap({"ANDA": "abbreviated new drug application", "NDA": "new drug application"})
    assert acronyms.additions("When is an abbreviated new drug application filed?") == ["ANDA"]


def test_expansion_adds_one_variant_with_the_other_forms_after_the_table_rules():
    acronyms = build_map(DOCS)
    assert expand_query("What is PAT?", acronyms=acronyms) == ["What is PAT?",
                                                                "What is PAT? process analytical technology"]
    assert expand_query("What is PAT?") == ["What is PAT?"]
    variants = expand_query("Is continuous processing PAT-based? Does PAT apply?", acronyms=acronyms)
    assert variants[1].endswith("continuous manufacturing ICH Q13")
    assert variants[2].endswith("process analytical technology")
