"""A page's lines are read top to bottom when its printer drew them out of order, and columns keep the stream's
order (ingest-15)."""

import pytest

from citestream.ingest.chunking import child_pieces_from_blocks
from citestream.ingest.layout import Block, extract_blocks
from citestream.ingest.pdf import Fragment, RawPage
from citestream.ingest.pipeline import from_pdf, plan_chunks

from tests.support.common import TRAINING_DOCS


def _line(text: str, top: float, x0: float = 72, x1: float = 540, page: int = 1) -> Fragment:
    return Fragment(page, text, x0, x1, top - 12, top, 12.0, False)


def _page(fragments: list[Fragment], number: int = 1, width: float = 612, height: float = 792) -> RawPage:
    return RawPage(number, width, height, " ".join(f.text for f in fragments), fragments)


def test_a_heading_and_its_lead_in_drawn_first_are_read_below_the_text_above_them():
    """The eCFR's print drew a section's heading and lead-in before the paragraph printed above them."""
    drawn = [
        _line("Control of records.", 300, x1=200),
        _line("The manufacturer must include the following information in certain records:", 280),
        _line("(a) Devices automated with computer software are listed in the table of this section.", 600),
        _line("(b) Enforcement of this part is by the agency named in it.", 560),
        _line("(a) Records of complaints. The manufacturer keeps records of every complaint.", 260),
    ]
    text = "\n".join(b.text for b in extract_blocks([_page(drawn)]))
    order = [text.index(s) for s in ("(a) Devices", "(b) Enforcement", "Control of records", "must include",
                                     "(a) Records of complaints")]
    assert order == sorted(order), text


def test_two_columns_keep_the_stream_order():
    """Lines side by side share a height: the page is read as drawn, the left column before the right."""
    left = [_line(f"Left column sentence number {i} about batch records.", 700 - 20 * i, 72, 290) for i in range(5)]
    right = [_line(f"Right column sentence number {i} about stability data.", 700 - 20 * i, 320, 540)
             for i in range(5)]
    text = "\n".join(b.text for b in extract_blocks([_page(left + right)]))
    assert text.index("Left column sentence number 4") < text.index("Right column sentence number 0"), text


def test_a_page_number_set_apart_above_the_edge_zone_does_not_join_the_sentence_it_interrupts():
    """IND Phase 1's page numbers sit a little above the footer zone: read in page order, "3" joined the sentence
    going on to the next page."""
    first = _page([_line("Phase 1 protocols should be directed primarily at providing an outline of the", 700),
                   _line("3", 86, 300, 306)])
    second = _page([_line("investigation and the clinical procedures to be followed.", 700, page=2),
                    _line("4", 86, 300, 306, page=2)], number=2)
    text = " ".join(" ".join(b.text for b in extract_blocks([first, second])).split())
    assert "outline of the investigation" in text, text


def test_a_running_header_found_in_the_edge_zone_is_dropped_lower_on_a_landscape_page():
    """ICH Q12 prints its header in the top zone of its portrait pages and lower on its landscape table pages."""
    portrait = [_page([_line("ICH Q12 Guideline", 780, page=n),
                       _line(f"Established conditions are described on page {n} of the guideline.", 700, page=n)],
                      number=n) for n in (1, 2, 3)]
    landscape = _page([_line("ICH Q12 Guideline", 560, 350, 440, page=4),
                       _line("3.2.P.3.1 Manufacturers of the drug product are named with their sites.", 500, page=4)],
                      number=4, width=792, height=612)
    blocks = extract_blocks([*portrait, landscape])
    assert not [b for b in blocks if b.page == 4 and "ICH Q12 Guideline" in b.text], blocks


def test_a_lead_in_a_page_cut_goes_whole_to_its_list_on_the_next_page():
    """The page ended on a lead-in's first word: the lead-in goes to its items, on the page they are printed on."""
    blocks = [Block(5, "The manufacturer keeps records of every complaint it investigated. For", "text", "S"),
              Block(6, "complaints reported to FDA, the manufacturer must record the following information:", "text",
                    "S"),
              Block(6, "(1) The name of the device;", "list", "S"),
              Block(6, "(2) The date the complaint was received.", "list", "S")]
    pieces = child_pieces_from_blocks(blocks)
    listed = next(p for p in pieces if "(1) The name" in p.text)
    assert listed.page == 6 and " ".join(listed.text.split()).startswith("For complaints reported to FDA"), pieces
    assert pieces[0].text.endswith("complaint it investigated."), pieces


PART_820 = TRAINING_DOCS / "21_CFR_Part_820_up_to_date_as_of_2-12-2026.pdf"


@pytest.mark.slow
@pytest.mark.skipif(not PART_820.is_file(), reason="../shared/training-docs is not present")
def test_part_820_reads_each_lead_in_with_its_own_list():
    """21 CFR 820.35: the records' lead-in goes on to its paragraphs, the complaints' lead-in to its items, and
    § 820.45's text stays out of § 820.35(a)."""
    children, _ = plan_chunks(from_pdf(PART_820))
    text = " ".join(" ".join(c.text.split()) for c in children)
    records = text.index("must include the following information in certain records:")
    assert text.index("(a) Records of complaints.", records) - records < 200
    complaints = text.index("complaints that must be reported to FDA under part 803")
    assert text.index("(4) The name, address, and phone number of the complainant") > complaints
    assert "§ 820.45" not in text[records:complaints]
    listed = next(c for c in children if "(7) Any reply to the complainant" in c.text)  # the lead-in with its items
    assert listed.page == 6 and " ".join(listed.text.split()).startswith("For complaints that must be reported")
