"""Quoted units are whole, over every corpus and training PDF: no footnote mark inside a quoted sentence (issue 47:
the marks are found here on their own, from pdfium's text boxes, as ingest finds them from each glyph's box), and no
heading the layout saw glued before a quoted sentence, no lead-in without its list (issue 52)."""

import re
from concurrent.futures import ThreadPoolExecutor
from functools import cache, partial
from itertools import pairwise

import pytest

from citestream.core.text_units import _STOPS_SENTENCE, read_units, split_units
from citestream.ingest import pdf_paths
from citestream.ingest.pipeline import from_pdf, plan_chunks
from citestream.sandbox.pool import pdf_pool

from tests.support.common import CORPUS, TRAINING_DOCS

pytestmark = pytest.mark.slow

PDFS = sorted(p for folder in (CORPUS, TRAINING_DOCS) if folder.is_dir() for p in pdf_paths([folder]))


@cache
def parsed(pdf):
    """The document as ingest reads it and its children: parsed once for every test of the module."""
    doc = from_pdf(pdf)
    return doc, plan_chunks(doc)[0]


def footnote_marks(pdf, page: int) -> list[tuple[str, str]]:
    """(the words before, the mark) of every run of digits set right after a word or its punctuation, in its own
    text box, smaller than that text's box and above its baseline ("resources⁸", "approval.⁹"), whose footnote is
    lower on the page."""
    reply, _ = pdf_pool().call("boxes", pdf.read_bytes(), page=page)
    segments = reply["segments"]
    marks = []
    for i in range(1, len(segments)):
        _, bottom, _, top, text = segments[i]
        _, b, _, t, before = segments[i - 1]
        number = text.strip()
        if not re.fullmatch(r"\d{1,3}(?:,\d{1,3})*", number) or not before or before[-1].isspace():
            continue
        if i > 1 and len(before.strip()) <= 2:  # a stop or a bracket in a box of its own: the word is in the one before
            before = segments[i - 2][4] + before
            b, t = segments[i - 2][1], segments[i - 2][3]
        words = re.findall(r"[A-Za-z]{3,}", before)
        first = number.split(",")[0]
        noted = any(s[1] < min(bottom, reply["height"] / 2) and re.match(rf"{first}(?:\s|$)", s[4].strip())
                    for s in segments)  # its footnote, lower on the page, opens with its number
        raised = top - bottom < 0.7 * (t - b) and bottom > b + 0.25 * (t - b)  # not a digit's own shorter box
        if words and noted and raised and b - 1 <= bottom <= t and before.rstrip()[-1] not in "(-\u2013:":
            marks.append((" ".join(before.split()[-2:]), number))  # "in Figure 2" + "2": the words as printed
    return marks


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_no_footnote_mark_stays_inside_a_quoted_sentence():
    found, kept = 0, []
    for pdf in PDFS:
        _, children = parsed(pdf)
        quoted: dict[int, list[str]] = {}
        for child in children:
            quoted.setdefault(child.page, []).extend(u.quote for u in read_units(child.text))
        pages = range(1, max(quoted, default=0) + 1)
        with ThreadPoolExecutor(2) as readers:  # the pdfium pool's two children read two pages at once
            marks = list(readers.map(partial(footnote_marks, pdf), pages))
        for page, on_page in zip(pages, marks):
            for words, mark in on_page:
                found += 1
                glued = re.compile(re.escape(words).replace(r"\ ", r"\s+") + rf"\s?{mark}(?![\d.,]\d)")
                kept += [(pdf.name, page, unit) for unit in quoted.get(page, []) + quoted.get(page - 1, [])
                         if glued.search(unit)]
    assert found > 400  # the marks are there to be found: the check sees them (584 on 2026-11-27)
    assert kept == []


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_headings_are_not_glued_to_quoted_sentences_and_lead_ins_keep_their_lists():
    """The headings the layout found (by type size and weight, not by wording) and the units quoted after them: a
    unit that opens with a heading's words and goes on is a heading glued to its sentence. Measured 2026-11-29 over
    the 39 PDFs: 586 of 11,612 quoted units before issue 52, 396 of 11,690 after (layout headings of two words or
    more); a lead-in as the last unit of its chunk, its list in another: 159 of 485 before, 82 of 448 after. A
    lead-in quoted without its list in the same chunk (alone, or with its first item only): 350 before `ingest-11`,
    58 after (docs/experiments/2026-11-29-lists.md). Since `ingest-14` a lead-in whose items are sentences stands
    alone, its items the units after it (an answer quotes them with it): glued to its first sentence only, 58 of 116
    before, none after; alone before items that are no sentences (a list too long to join), 21 before, 22 after.
    Since `ingest-15` (pages drawn out of order read top to bottom, a lead-in a page cut moved whole to its list) a
    lead-in last in its chunk: 38 of 495 before, 33 of 493 after. Since `ingest-16` (a line shaped as a heading in
    any case is cut off, a run-in heading's short line ends its block) 283 of 11,670 units open with a layout
    heading before, 208 of 11,521 after (most of those left are terms defined after a colon, "Risk Review: ...")."""
    glued, units, alone, lead_ins, named, apart, first_only = 0, 0, 0, 0, [], 0, []
    for pdf in PDFS:
        doc, children = parsed(pdf)
        headings = {" ".join(b.text.split()) for b in doc.blocks if b.kind == "heading" and len(b.text.split()) >= 2}
        for child in children:
            quoted = read_units(child.text)
            apart += sum(u.quote.endswith(":") and not _STOPS_SENTENCE.search(after.quote)
                         for u, after in pairwise(quoted))
            for unit in quoted:
                units += 1
                glued += any(unit.quote.startswith(h + " ") for h in headings)
                named += [unit.quote[:60] for h in ("Subpart A-General Provisions", "Established Conditions (ECs)")
                          if unit.quote.startswith(h)]
            found = split_units(child.text)  # a lead-in before it is joined with its list
            ends = [i for i, u in enumerate(found) if u.rstrip().endswith(":")]
            first_only += [f"{found[i]} {found[i + 1]}" for i in ends if i + 2 < len(found)
                           and f"{found[i]} {found[i + 1]}" in {u.quote for u in quoted}
                           and _STOPS_SENTENCE.search(found[i + 1])]
            lead_ins += len(ends)
            alone += sum(i + 1 == len(found) for i in ends)
    assert named == []  # the two examples
    assert glued / units < 0.025 and alone / lead_ins < 0.075, (glued, units, alone, lead_ins)
    assert first_only == [] and apart <= 25, (first_only[:3], apart)


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_no_word_is_split_after_a_ligature():
    """The WHO's good distribution practices draw a space character inside each ligature ("suffi cient", "fi rst"):
    103 words of its chunks were split so before 2026-11-30, none after. Words spaced as words stay apart, though
    one PDF sets them tightly ("staff before", "dandruff shampoos": joined by a first version that read "ff" too)."""
    split, text = [], {}
    for pdf in PDFS:
        _, children = parsed(pdf)
        text[pdf.name] = " ".join(child.text for child in children)
        split += re.findall(r"\b[A-Za-z]*f[il] [a-z]+", text[pdf.name])
    assert split == []
    who = next(body for name, body in text.items() if name.startswith("trs957-annex5-who"))
    assert "sufficient capacity" in who and "first expiry" in who
    assert "staff before" in text["Analytical-Procedures-and-Methods-Validation-for-Drugs-and-Biologics.pdf"]
    assert "dandruff shampoos" in text["Drug_Approval_Process_Overview.pdf"]


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_no_heading_opens_in_lower_case_so_no_sentence_is_cut_by_one():
    """A line of body text set in a heading's type opened a section of its own and cut its sentence in two ("For" |
    "tracking purposes, it is important that the DQST Coordinators use ..."): 64 of 2,007 heading lines over the 39
    PDFs before `ingest-13`, and 40 text children opening mid-sentence, 32 after."""
    lower, mid = [], 0
    for pdf in PDFS:
        doc, children = parsed(pdf)
        lower += [(pdf.name, b.text[:60]) for b in doc.blocks if b.kind == "heading" and b.text.strip()[:1].islower()]
        mid += sum(c.kind == "text" and bool(re.match(r"[a-z][a-z]+[ ,;]", c.text))
                   and not re.match(r"(?:o|or|and)\s", c.text) for c in children)
    assert lower == []
    assert mid <= 32, mid
    dqst = next(p for p in PDFS if p.name.startswith("DRUG_QUALITY_SAMPLING"))
    assert any("For tracking purposes, it is important that the DQST Coordinators" in " ".join(c.text.split())
               for c in parsed(dqst)[1])


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_a_checklists_questions_are_quoted_units():
    """The PIC/S GDP aide-memoire is a checklist of questions for inspectors, and ICH Q9 lists the questions risk
    assessment asks: before 2026-12-03 no question was a unit, so 1,137 of the aide-memoire's 4,024 chunk words
    were in a unit (the judge read the rest as whole chunks, cut at its token limit); 3,133 now, 178 more units."""
    quotes = {}
    for pdf in PDFS:
        _, children = parsed(pdf)
        quotes[pdf.name] = {u.quote for child in children for u in read_units(child.text)}
    pics = quotes.get("pi-044-1-pics-gdp-aide-memoire.pdf", set())
    assert "Are vehicles cleaned and fit for purpose?" in pics
    assert sum(q.endswith("?") for q in pics) >= 150
    assert "What can be done to reduce or eliminate risks?" in quotes["Q9_Guideline.pdf"]


@pytest.mark.skipif(not PDFS, reason="../shared/corpus and ../shared/training-docs are not present")
def test_headings_set_in_body_type_and_chapter_numbers_in_cells_leave_whole_sentences():
    """The defects judged in the 2026-12-03 samples (docs/experiments/2026-12-03-headings-in-any-case.md), read again
    from the PDFs: a run-in heading in body type, a heading that names what the sentence restates, a wrapped title,
    ICH Q7's chapter numbers read as a table's head cells, a sentence's last word read as a list letter."""
    quoted = {(pdf.name.split("_")[0], u.quote) for pdf in PDFS for c in parsed(pdf)[1] for u in read_units(c.text)}
    texts = {q for _, q in quoted}
    for whole in ("Blinding of drug products used in clinical trials can be done by over-encapsulation of the dosage "
                  "form.", "Risk control includes decision making to reduce and/or accept risks.",
                  "Any deviation should be documented and explained.",
                  "The impurity profile of a proposed generic drug should not pose a greater mutagenic risk than the "
                  "RLD.", "For questions regarding this draft document contact Jeanne M. Delasko at 301-796-0900."):
        assert whole in texts, whole
    assert not [q for name, q in quoted if name == "Q7" and re.match(r"\d{1,2}\.: ", q)]
