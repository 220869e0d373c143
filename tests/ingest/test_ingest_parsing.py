"""Parsing and chunking without a database: cleaning, footnotes, sections, exact pages, pass 2, issuer, stable
ids."""

import re
from pathlib import Path

import pytest

from citestream.ingest.issuer import decide_issuer
from citestream.ingest.chunking import CHILD_CHARS, OVERFLOW, PARENT_CHARS, child_pieces_from_blocks, group_parents
from citestream.ingest.layout import Block, extract_blocks
from citestream.ingest.pdf import Fragment, RawPage, UnreadablePdf, read_pages
from citestream.ingest.pipeline import from_pdf, plan_chunks

from tests.support.ingest import (
    RUNNING_HEADER, PageSpec, page_overlap, prose, write_blank_pdf, write_corrupt_pdf, write_encrypted_pdf,
    write_guidance_pdf, write_ligature_pdf, write_zero_byte_pdf,
)


@pytest.fixture()
def guidance(tmp_path) -> Path:
    pages = [
        PageSpec("I. INTRODUCTION", prose("electronic signature", 20)),
        PageSpec(None, ["Firms apply a pharma-", "ceutical quality system to every batch.",
                        "Stability data support long-", "term storage; long-term data are kept on file."]
                 + prose("stability", 10), line_numbers=True),
        PageSpec("II. AUDIT TRAILS", prose("audit trail", 25)),
    ]
    return write_guidance_pdf(tmp_path / "Part_11_Test.pdf", pages)


def _all_text(blocks: list[Block]) -> str:
    return "\n".join(b.text for b in blocks)


def test_running_headers_page_numbers_and_line_numbers_are_dropped(guidance):
    blocks = extract_blocks(read_pages(guidance))
    text = _all_text(blocks)
    assert RUNNING_HEADER not in text
    assert not any(b.text.strip().isdigit() for b in blocks)  # footer page numbers and bare line numbers
    page2 = _all_text([b for b in blocks if b.page == 2])
    assert "Firms apply" in page2 and not any(line.split()[0].isdigit() for line in page2.splitlines())


def test_hyphenation_at_line_end_is_joined_unless_the_compound_is_hyphenated_elsewhere(guidance):
    text = _all_text(extract_blocks(read_pages(guidance)))
    assert "pharmaceutical quality system" in text
    assert "long-term storage" in text


def test_headings_become_the_section_of_what_follows(guidance):
    blocks = extract_blocks(read_pages(guidance))
    assert {b.section for b in blocks if b.page == 1} == {"I. INTRODUCTION"}
    assert {b.section for b in blocks if b.page == 2} == {"I. INTRODUCTION"}  # carried over the page break
    assert {b.section for b in blocks if b.page == 3} == {"II. AUDIT TRAILS"}


def test_children_stay_on_one_page_and_one_section_and_know_their_parent(guidance):
    doc = from_pdf(guidance)
    children, parents = plan_chunks(doc)
    pages = [p.text for p in read_pages(guidance)]
    for child in children:
        assert len(child.text) <= OVERFLOW * CHILD_CHARS
        overlap = page_overlap(child.text, pages)
        assert overlap[child.page - 1] == max(overlap) >= 0.9, (child.page, overlap, child.text[:80])
    assert sorted(i for group in parents for i in group) == list(range(len(children)))
    for group in parents:
        assert sum(len(children[i].text) for i in group) <= PARENT_CHARS + OVERFLOW * CHILD_CHARS


def test_same_file_gives_the_same_chunks(guidance):
    assert plan_chunks(from_pdf(guidance)) == plan_chunks(from_pdf(guidance))


def test_pass_two_adds_a_page_block_when_pass_one_lost_text():
    page = RawPage(1, 612, 792, "Alpha beta gamma delta epsilon zeta eta theta iota kappa", [
        Fragment(1, "Alpha beta", 72, 200, 700, 712, 12.0, False)])  # pass 1 saw a fifth of the page
    blocks = extract_blocks([page])
    assert blocks[-1].kind == "page" and blocks[-1].page == 1 and "kappa" in blocks[-1].text


def test_tables_and_lists_are_kept_whole_when_they_fit():
    items = [Block(1, f"• Item {i} is a short list entry about records.", "list", "S") for i in range(5)]
    table = Block(1, "Test | Limit | Unit\nAssay | 95-105 | %\nWater | 0.5 | %", "table", "S")
    pieces = child_pieces_from_blocks([*items, table])
    assert len(pieces) == 1 and all(b.text in pieces[0].text for b in [*items, table])


def test_long_blocks_split_at_sentences_and_parents_group_children():
    sentence = "Each batch record is reviewed before release. "
    pieces = child_pieces_from_blocks([Block(1, sentence * 60, "text", "S"), Block(2, sentence * 60, "text", "S")])
    assert {p.page for p in pieces} == {1, 2}
    assert all(p.text.endswith(".") and len(p.text) <= CHILD_CHARS for p in pieces)
    assert len(group_parents(pieces)) >= 2


def test_a_child_keeps_the_end_of_a_sentence_a_block_boundary_cut_on_its_page():
    """A paragraph the layout cut into two blocks mid-sentence: the child that closes first keeps the sentence
    whole, so one chunk quotes it; on another page the child still ends where its page does."""
    filler = "The sponsor should describe the manufacturing process in enough detail. " * 9
    head = Block(1, f"{filler}Modifications that do not affect safety are required to be reported to FDA", "text", "S")
    rest = "Other changes need an amendment before they start, with the data that support them. " * 3
    tail = Block(1, f"only in the IND annual report. {rest}", "text", "S")
    pieces = child_pieces_from_blocks([head, tail])
    assert pieces[0].text.endswith("reported to FDA\nonly in the IND annual report.")
    assert pieces[1].text == rest.strip()
    on_next_page = child_pieces_from_blocks([head, Block(2, tail.text, "text", "S")])  # completed across the break
    assert on_next_page[0].text.endswith("reported to FDA\nonly in the IND annual report.")
    assert (on_next_page[0].page, on_next_page[1].page, on_next_page[1].text) == (1, 2, rest.strip())
    footnote = Block(1, "21 CFR 314.3(b).", "note", "S")  # between the two, it stays where it is
    around = child_pieces_from_blocks([head, footnote, Block(2, tail.text, "text", "S")])
    assert around[0].text.endswith("only in the IND annual report.") and around[1].text == footnote.text
    heading_next = child_pieces_from_blocks([head, Block(2, "Other changes are listed below.", "text", "T")])
    assert heading_next[0].text.endswith("reported to FDA")  # another section: not the rest of that sentence
    list_item = child_pieces_from_blocks([head, Block(1, f"(4) As applicable, the same. {rest}", "list", "S")])
    assert list_item[0].text.endswith("reported to FDA")  # an enumerated item is not the rest of the sentence
    bracket = Block(2, f"(bio-batch) and supported by stability batches. {rest}", "text", "S")  # a page turn
    assert child_pieces_from_blocks([head, bracket])[0].text.endswith("FDA\n(bio-batch) and supported by stability "
                                                                     "batches.")
    marker = Block(2, f"(iv) Other changes need an amendment. {rest}", "text", "S")
    assert child_pieces_from_blocks([head, marker])[0].text.endswith("reported to FDA")


def test_a_word_cut_at_its_hyphen_gets_its_acronym_back_but_no_capitalised_block():
    """Target_Product_Profile_A_72566.pdf page 6: "... pre-biologics license application (pre-" | "BLA) meetings,
    when ...": the rest of the word, an acronym, opens the next block; a capitalised word may open a footnote."""
    filler = "A well-organized TPP can save meeting time for discussion of issues. " * 9
    head = Block(1, f"{filler}It is especially important at pre-new drug application (pre-NDA) and (pre-", "text", "S")
    rest = "The TPP is part of the proprietary IND file, and it is kept with the other meeting records. " * 3
    pieces = child_pieces_from_blocks([head, Block(1, f"BLA) meetings, when it can help. {rest}", "text", "S")])
    assert pieces[0].text.endswith("(pre-BLA) meetings, when it can help.")
    footnote = child_pieces_from_blocks([head, Block(1, f"See, e.g., section 505(j)(4)(A). {rest}", "text", "S")])
    assert footnote[0].text.endswith("(pre-")


def test_issuer_from_the_first_pages_when_no_manifest(tmp_path):
    folder = tmp_path / "no-manifest"
    folder.mkdir()
    fda = "U.S. Department of Health and Human Services\nFood and Drug Administration"
    ich = "INTERNATIONAL CONFERENCE ON HARMONISATION OF TECHNICAL REQUIREMENTS"
    assert decide_issuer(folder / "x.pdf", [fda]).authority == "FDA"
    assert decide_issuer(folder / "x.pdf", [f"Guidance for Industry\n{ich}\n{fda}"]).authority == "ICH"
    assert decide_issuer(folder / "x.pdf", ["European Medicines Agency\nCHMP"]).authority == "EMA"
    assert decide_issuer(folder / "SOP-QA-012.pdf", ["Standard Operating Procedure"]).authority == "SOPS"
    assert decide_issuer(folder / "ICH_Q10.pdf", [""]).authority == "ICH"
    unknown = decide_issuer(folder / "notes.pdf", ["Minutes of the garden club"])
    assert (unknown.issuer, unknown.authority, unknown.source) == ("", "MIXED", "unknown")
    assert decide_issuer(folder / "notes.pdf", [fda], given_authority="SOPS").authority == "SOPS"


def test_issuer_from_the_manifest_beside_the_pdfs(tmp_path):
    (tmp_path / "manifest.json").write_text('[{"file": "a.pdf", "authority": "EMA"}, '
                                            '{"file": "b.pdf", "issuer": "WHO"}]')
    decision = decide_issuer(tmp_path / "a.pdf", ["Food and Drug Administration"])
    assert (decision.issuer, decision.authority, decision.source) == ("EMA", "EMA", "manifest")
    who = decide_issuer(tmp_path / "b.pdf", ["Food and Drug Administration"])
    assert (who.issuer, who.authority, who.source, who.read.issuer) == ("WHO", "MIXED", "manifest", "FDA")


def _line(text: str, top: float, size: float = 12.0, **kw) -> Fragment:
    return Fragment(1, text, 72, 540, top - size, top, size, False, **kw)


def test_footnote_marks_and_margin_numbers_set_inside_a_line_are_dropped():
    """The child marks digit runs no sentence holds (superscript, or set left of the text before them): they go; a
    power of a unit stays."""
    def marked(text: str, top: float, *after: str) -> Fragment:  # each mark: the digits right after ``after``
        spans = []
        for prefix in after:
            start = text.index(prefix) + len(prefix)
            spans.append((start, start + len(re.match(r"\d+", text[start:]).group(0))))
        return _line(text, top, marks=tuple(spans))

    lines = [marked("the Agency with resources8 to help ensure", 700, "resources"),
             marked("of the 2016 edition of ISO 134852 (hereafter", 686, "ISO 13485"),
             marked("methods validation5 20 data to support", 672, "validation", "validation5 "),
             marked("a floor of 25 m2 in each room.", 658, "25 m")]
    page = RawPage(1, 612, 792, " ".join(f.text for f in lines), lines)
    text = " ".join(b.text for b in extract_blocks([page]))
    assert ("resources to help" in text and "ISO 13485 (hereafter" in text and "validation data to" in text
            and "25 m2 in each room" in text)


def test_a_space_drawn_inside_a_ligature_is_no_gap_between_words(tmp_path):
    """pdfium reads a space character some PDFs draw inside a ligature's glyph ("suffi cient"): the child drops it,
    and the footnote mark after the word is still the one dropped; a space drawn where words part stays."""
    (child,) = plan_chunks(from_pdf(write_ligature_pdf(tmp_path / "ligature.pdf")))[0]
    assert child.text == "Keep a sufficient supply of first aid kits for the staff near the line."


def test_footnotes_are_told_by_their_numbers_and_never_join_the_body():
    """Footnotes set only a little smaller than the body (0.86 of it in a corpus PDF) are notes when they open with a
    number the page's text marks; a short one stays a chunk of its own."""
    body = [_line(f"Sponsors compare a plasma exposure profile to a reference product{'.7' if i == 0 else ''} A "
                  "systemic exposure", 700 - 14 * i, 16.2, marks=((66, 67),) if i == 0 else ()) for i in range(12)]
    notes = [_line("7 21 CFR 320.25.", 120, 14.0, lead_number=7, lead_gap=1.0)]
    blocks = extract_blocks([RawPage(1, 612, 792, "", body + notes)])
    assert [b.kind for b in blocks if "CFR" in b.text] == ["note"]
    pieces = child_pieces_from_blocks(blocks)
    assert [p.kind for p in pieces if "320.25" in p.text] == ["note"]
    assert not any("320.25" in p.text and "exposure" in p.text for p in pieces)


def test_a_footer_stacked_on_a_running_line_and_page_of_lines_are_dropped():
    pages = []
    for n in range(1, 4):
        lines = [_line("Guideline on the requirements for the chemical quality", 79.1, 8.7),
                 _line(f"EMA/CHMP/QWP/545525/2017 Page {n}/3", 62.0, 8.5),
                 _line(f"CFR 820.{n}(d)({n}) (enhanced display) page {n} of 3", 30.0, 8.5),
                 _line(f"Body text of page {n} says what the guideline requires of every batch.", 700)]
        pages.append(RawPage(n, 595, 842, "", [Fragment(n, f.text, f.x0, f.x1, f.bottom, f.top, f.size, f.bold)
                                               for f in lines]))
    text = _all_text(extract_blocks(pages))
    assert "Guideline on the requirements" not in text and "enhanced display" not in text and "Page 2/3" not in text
    assert text.count("Body text of page") == 3


@pytest.mark.parametrize("make, reason", [
    (write_encrypted_pdf, "encrypted"),
    (lambda p: write_corrupt_pdf(p), "corrupt"),
    (write_zero_byte_pdf, "empty file"),
])
def test_unreadable_pdfs_raise_with_a_clear_reason(tmp_path, make, reason):
    path = make(tmp_path / "bad.pdf")
    with pytest.raises(UnreadablePdf, match=reason):
        read_pages(path)


def test_blank_pdf_has_pages_but_no_blocks(tmp_path):
    pages = read_pages(write_blank_pdf(tmp_path / "blank.pdf"))
    assert len(pages) == 2 and extract_blocks(pages) == []


def test_a_lead_in_goes_with_the_list_it_announces():
    """A child that would close on "... the following:" leaves the lead-in to the child that holds its items, on
    the page and across a page break: a lead-in is never quoted without its list."""
    filler = "The sponsor should describe the manufacturing process in enough detail for review. " * 9
    lead_in = "A meeting may be rescheduled by FDA if:"
    items = [Block(1, f"• item {i}: the applicant's package is not received in time for review.", "list", "S")
             for i in range(4)]
    pieces = child_pieces_from_blocks([Block(1, filler.strip(), "text", "S"), Block(1, lead_in, "text", "S"), *items])
    holder = next(p for p in pieces if lead_in in p.text)
    assert "• item 0" in holder.text and len(pieces) > 1
    assert not any(p.text.rstrip().endswith(":") for p in pieces)
    glued = child_pieces_from_blocks([Block(1, f"{filler}{lead_in}", "text", "S"), *items])  # one block's last sentence
    assert not any(p.text.rstrip().endswith(":") for p in glued)
    assert "• item 0" in next(p for p in glued if lead_in in p.text).text
    across = child_pieces_from_blocks([Block(1, f"{filler}{lead_in}", "text", "S"),
                                       *(Block(2, b.text, "list", "S") for b in items[:2]),
                                       Block(2, "Other changes need an amendment before they start.", "text", "S")])
    assert across[0].page == 1 and across[0].text.endswith("• item 1: the applicant's package is not received in "
                                                            "time for review.")
    assert across[-1].page == 2 and across[-1].text == "Other changes need an amendment before they start."


def test_a_table_row_is_one_unit_carrying_its_header(tmp_path):
    """Cells pdfium emits as one line ("Assay      95.0-105.0%      HPLC") are cut at their wide gaps; each row of the
    table is then one line of text, each cell after its column's header (the bold first row), and one quotable unit:
    not cells run together with the next row and the sentences around the table."""
    from citestream.core.text_units import read_units
    from tests.support.ingest import write_table_pdf

    path = write_table_pdf(tmp_path / "spec.pdf", "The specification of the drug product lists each test.",
                           ["Test", "Acceptance criterion", "Procedure"],
                           [["Assay", "95.0-105.0% of label claim", "HPLC method 12"],
                            ["Water content", "Not more than 0.5%", "Karl Fischer"]],
                           "Other tests may be added after approval of the application.")
    blocks = extract_blocks(read_pages(path))
    table = next(b for b in blocks if b.kind == "table")
    assert table.text.split("\n") == [
        "Test: Assay | Acceptance criterion: 95.0-105.0% of label claim | Procedure: HPLC method 12.",
        "Test: Water content | Acceptance criterion: Not more than 0.5% | Procedure: Karl Fischer."]
    children, _ = plan_chunks(from_pdf(path))
    quotes = [u.quote for child in children for u in read_units(child.text)]
    assert table.text.split("\n")[1] in quotes
    assert "The specification of the drug product lists each test." in quotes


def test_a_lead_in_ending_a_long_paragraph_goes_with_its_list_in_the_next_child():
    """A paragraph longer than half a child, after another block, that ends in a lead-in, its list too long to join
    it: the lead-in, the paragraph's last sentence, opens the next child with the list (before, it closed the child
    and was quoted alone: 82 lead-ins of the 39 PDFs ended their chunk)."""
    lead_in = "Pharmaceutical development should include, at a minimum, the following elements:"
    opening = "Approaches to pharmaceutical development differ from one product to the next."
    paragraph = "The sponsor should describe the manufacturing process in enough detail for review. " * 7 + lead_in
    items = [Block(1, f"• Element {i}: defining the quality target product profile as it relates to quality, safety "
                      "and efficacy of the product, considering the route of administration and the dosage form.",
                   "list", "S") for i in range(6)]
    pieces = child_pieces_from_blocks([Block(1, opening, "text", "S"), Block(1, paragraph, "text", "S"), *items])
    assert len(pieces) > 1 and not any(p.text.rstrip().endswith(":") for p in pieces)
    assert next(p for p in pieces if lead_in in p.text).text.startswith(f"{lead_in}\n• Element 0")


def _at(text: str, x0: float, x1: float, top: float, size: float = 12.0) -> Fragment:
    return Fragment(1, text, x0, x1, top - size, top, size, False)


def test_a_run_in_headings_line_that_ends_short_ends_its_block_but_a_sentences_does_not():
    """A heading set in body type on a line of its own ("a. Over-encapsulation ...", printed as a list item) stops
    well before the margin the paragraph under it reaches: its block ends there, so the text reader can cut it off.
    A sentence whose line ends short ("... the Center for Drug Evaluation and" / "Research ...") and a lead-in with
    items printed without full stops stay one block; "RLD." (a sentence's last word) opens no list item."""
    def blocks_of(*lines: Fragment) -> list[str]:
        return [b.text for b in extract_blocks([RawPage(1, 612, 792, "", list(lines))])]

    assert blocks_of(_at("a. Over-encapsulation of clinical trial formulations", 144, 414, 700),
                     _at("Blinding of drug products used in clinical trials can be done by", 72, 537, 686),
                     _at("over-encapsulation of the dosage form.", 72, 300, 672)) == [
        "a. Over-encapsulation of clinical trial formulations",
        "Blinding of drug products used in clinical trials can be done by over-encapsulation of the dosage form."]
    assert len(blocks_of(_at("This guidance has been prepared by the Center for Drug Evaluation and", 72, 400, 700),
                         _at("Research at the Food and Drug Administration, as the agency requires.", 72, 537, 686),
                         _at("It applies to every application.", 72, 250, 672))) == 1
    assert len(blocks_of(_at("Training programs should include the following: Evaluation of needs", 72, 380, 700),
                         _at("Provision of training to satisfy the needs identified by the evaluation", 72, 537, 686),
                         _at("Evaluation of the effectiveness of training.", 72, 300, 672))) == 1
    assert blocks_of(_at("The impurity profile should not pose a greater mutagenic risk than the", 72, 537, 700),
                     _at("RLD. DMF holders should provide an assessment of mutagenic impurities.", 72, 500, 686)) == [
        "The impurity profile should not pose a greater mutagenic risk than the RLD. DMF holders should provide an "
        "assessment of mutagenic impurities."]


def test_a_section_number_set_apart_by_a_tab_opens_no_table():
    """ICH Q7 sets each chapter's number and title, and each paragraph's number, apart by a wide gap: read as table
    cells they put "8.: " and the chapter's title inside every sentence of the page. A number alone in the first
    cell is a number: the line is one line of text."""
    lines = [Fragment(1, "8.", 72, 84, 688, 700, 12.0, True), Fragment(1, "PRODUCTION CONTROLS", 144, 300, 688, 700,
                                                                    12.0, True),
             Fragment(1, "8.15", 72, 96, 668, 680, 12.0, False),
             Fragment(1, "Any deviation should be documented and explained.", 144, 480, 668, 680, 12.0, False)]
    texts = [b.text for b in extract_blocks([RawPage(1, 612, 792, "", lines)])]
    assert "8.15 Any deviation should be documented and explained." in texts
    assert not any(": " in t or " | " in t for t in texts), texts
