"""Where a quoted sentence sits on a page (issue 55): exactly its characters, widened to whole words, one box per
line; a phrase that recurs elsewhere on the page is not marked there; a quote the chunk does not hold is ignored."""

from citestream.web.render import quote_boxes, quoted, segment_boxes


def _page(lines: list[str]) -> tuple[str, list]:
    """A page's characters and their boxes: each line 20 pt high, each character 6 pt wide."""
    chars, boxes = "", []
    for n, line in enumerate(lines):
        top = 800 - 20 * n
        for i, c in enumerate(line + "\n"):
            chars += c
            boxes.append((72 + 6 * i, top - 12, 78 + 6 * i, top) if c != "\n" else (0, 0, 0, 0))
    return chars, boxes


LINES = ["The applicant should file the form. Cleaning re-",
         "quirements apply to every vessel after each batch.",
         "Elsewhere the applicant should keep records."]


def test_only_the_sentence_in_whole_words_one_box_per_line():
    chars, boxes = _page(LINES)
    found = quote_boxes(chars, boxes, "Cleaning requirements apply to every vessel after each batch.")
    assert len(found) == 2  # the two lines the sentence covers, nothing on the third
    first, second = found
    assert first[0] == 72 + 6 * LINES[0].index("Cleaning")  # starts at a word, not inside "form."
    assert first[2] == 78 + 6 * (len(LINES[0]) - 1)  # up to "re-"
    assert second[0] == 72 and second[2] == 78 + 6 * (len(LINES[1]) - 1)  # "batch." with its full stop


def test_a_sign_or_bracket_held_to_a_word_is_marked_with_it():
    chars, boxes = _page(["Stroke risk fell by approximately 70% in (DOAC) trials."])
    [box] = quote_boxes(chars, boxes, "approximately 70")
    assert box[2] == 78 + 6 * chars.index("%")  # "70%", not "70" and a bare sign
    [box] = quote_boxes(chars, boxes, "DOAC")
    assert (box[0], box[2]) == (72 + 6 * chars.index("("), 78 + 6 * chars.index(")"))


def test_a_quote_starting_inside_a_word_is_widened_to_the_word():
    chars, boxes = _page(LINES)
    [box] = quote_boxes(chars, boxes, "pplicant should keep records")
    assert box[0] == 72 + 6 * LINES[2].index("applicant")


def test_a_quote_the_page_does_not_hold_gives_no_box():
    chars, boxes = _page(LINES)
    assert quote_boxes(chars, boxes, "A sentence from another page entirely.") == []


def test_segments_recurring_elsewhere_are_not_marked():
    rects = [(0, 100 - 10 * i, 100, 110 - 10 * i) for i in range(6)]
    segments = ["theapplicantshould", "cleaningrequirementsapply", "toeveryvesselaftereachbatch", "12",
                "unrelatedlineoftext", "theapplicantshould"]
    wanted = "theapplicantshouldcleaningrequirementsapplytoeveryvesselaftereachbatch"
    assert segment_boxes(rects, segments, wanted) == rects[:3]  # the run, not the lone repeat at the end


def test_only_a_sentence_the_chunk_holds_is_marked():
    chunk = "Lecanemab slowed decline by 27%. The drug targets soluble amyloid-beta protofibrils."
    assert quoted(chunk, "The drug targets soluble  amyloid-beta protofibrils.") == \
        "The drug targets soluble amyloid-beta protofibrils."
    assert quoted(chunk, "Aspirin cures everything.") == ""
    assert quoted(chunk, "x" * 10_000) == ""
