"""A document's title (issue 55): the PDF's own title, else its first heading, else its file name; never a file
name or an editor's placeholder passed off as a title."""

from citestream.ingest.layout import Block
from citestream.ingest.pipeline import from_pdf
from citestream.ingest.title import read_title

from tests.support.ingest import prose, write_cover_pdf
from tests.support.web import write_pdf


def test_the_pdfs_own_title_is_read(tmp_path):
    doc = from_pdf(write_pdf(tmp_path / "smoke-009.pdf", "DOAC Stroke Prevention", "Apixaban lowers stroke risk."))
    assert (doc.title, doc.pdf) == ("DOAC Stroke Prevention", "smoke-009.pdf")


def test_the_first_heading_when_the_metadata_has_no_title(tmp_path):
    cover = ["Cleaning Validation of Shared Equipment", "Standard Operating Procedure", "SOP-QA-017"]
    doc = from_pdf(write_cover_pdf(tmp_path / "sop-qa-017.pdf", cover, prose("cleaning", 8)))
    assert doc.title.startswith("Cleaning Validation of Shared Equipment")  # a cover set in one size is one heading


def test_the_file_name_when_nothing_better_is_found():
    assert read_title({"Title": "Microsoft Word - draft_v3.docx"}, [], "draft_v3") == "draft_v3"
    assert read_title({"Title": "untitled"}, [Block(1, "12", "heading")], "scan-0042") == "scan-0042"
    assert read_title({}, [Block(3, "A heading on page three", "heading")], "notes") == "notes"
    assert read_title({"Title": "notes"}, [], "notes") == "notes"  # the file name again is no title


def test_a_title_is_one_line_of_bounded_length():
    title = read_title({"title": "  Guideline on\n process   validation " + "x" * 400}, [], "f")
    assert "\n" not in title and len(title) <= 200 and title.startswith("Guideline on process validation")
