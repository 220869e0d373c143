"""The corpus lexicon (its acronyms and its spelling) and the query variant it adds (qa-v1.1)."""

import logging

from citestream.qa.retrieve.acronyms import AcronymMap, build_map
from citestream.qa.retrieve.expansion import expand_query
from citestream.qa.retrieve.lexicon import build_lexicon
from citestream.qa.retrieve.spelling import build_spelling

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


def test_a_form_counts_as_used_where_its_whole_word_pattern_finds_it():
    """Documents are read for their whole words once (the per-acronym search grew with acronyms x documents); a
    form is used where ``_whole_word`` would find it: it or its plural, not inside a word, not hyphenated."""
    from citestream.qa.retrieve.acronyms import _used_in, _whole_word, _words

    bodies = ["The BAs were measured.", "PAT-based control", "a BAT test", "see BA_1 and (BA).", "ÉBA BA2", "x-BA",
              "CMC, CMCs; OGD's office", "", "BA\nPAT"]
    words = [_words(body) for body in bodies]
    for form in ("BA", "PAT", "BAT", "CMC", "OGD", "BA2", "ÉBA", "IV"):
        assert _used_in(form, words) == sum(bool(_whole_word(form).search(body)) for body in bodies), form


def test_a_long_form_inside_a_longer_one_does_not_count():
    acronyms = AcronymMap({"ANDA": "abbreviated new drug application", "NDA": "new drug application"})
    assert acronyms.additions("When is an abbreviated new drug application filed?") == ["ANDA"]


def test_a_typo_is_read_as_the_corpus_spelling_and_unknown_words_stay():
    spelling = build_spelling({"d": "Bioavailability is defined as the rate of absorption. Define it; defined twice."})
    assert spelling.correct("How does FDA defin bioavailabilty?") == "How does FDA defin bioavailability?"  # defin:
    # the stem of a word the corpus uses (define, defined), so known
    assert spelling.correct("Which blockchain ledger?") == "Which blockchain ledger?"  # near no corpus word
    assert spelling.correct("rate of absorbtion") == "rate of absorption"
    assert spelling.suggestion("defined") is None and spelling.suggestion("abc") is None  # known / too short
    assert spelling.suggestion("defines") is None  # an inflection of a known word is not a typo
    english = build_spelling({"d": "The leading cause."}, english=frozenset({"leaving"}))
    assert english.correct("leaving aside") == "leaving aside"  # a common English word is not a typo
    assert build_spelling({"d": "The leading cause."}).correct("leaving aside") == "leading aside"


def test_expansion_adds_one_variant_in_the_corpus_words_after_the_table_rules():
    lexicon = build_lexicon(DOCS)
    assert expand_query("What is PAT?", lexicon=lexicon) == ["What is PAT?",
                                                            "What is PAT? process analytical technology"]
    assert expand_query("What is PAT?") == ["What is PAT?"]
    assert expand_query("Is bioavailibility assessed?", lexicon=lexicon)[1] == "Is bioavailability assessed? BA"
    assert expand_query("Is it in writing?", lexicon=lexicon) == ["Is it in writing?"]  # nothing to add
    variants = expand_query("Is continuous processing PAT-based? Does PAT apply?", lexicon=lexicon)
    assert variants[1].endswith("continuous manufacturing ICH Q13")
    assert variants[2].endswith("process analytical technology")


def test_reading_acronyms_leaves_the_process_logging_as_it_was():
    """The ``abbreviations`` package calls ``logging.basicConfig(level=INFO)`` when imported; a worker or a library
    user must not get every library's INFO lines from it (a fresh interpreter: the import happens once)."""
    import subprocess
    import sys

    script = ("import logging; from citestream.qa.retrieve.acronyms import build_map; "
              "assert build_map({'d': 'Process analytical technology (PAT) helps. PAT is used.'}); "
              "root = logging.getLogger(); print(root.level, len(root.handlers))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(logging.WARNING), "0"]


def test_a_plural_definition_reads_both_the_singular_and_the_plural():
    acronyms = build_map({"tpp": "Sponsors discuss target product profiles (TPPs) early. A TPP is a summary.",
                          "a": "Nothing here.", "b": "Nor here.", "c": "Nor here.", "d": "Nor here either."})
    assert acronyms.long_of["TPP"] == "target product profile"
    spelled, _ = acronyms.spelled_out("Is the TPP part of the file?")
    assert spelled == "Is the target product profile (TPP) part of the file?"
    assert acronyms.spelled_out("Are TPPs shared?")[0] == "Are target product profiles (TPPs) shared?"
