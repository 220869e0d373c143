"""The annotation tools: a multi-part question's labels are checked part by part, and a merged batch carries the
texts and pages training aligns by."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from annotation_check import check_parts  # noqa: E402
from annotation_merge import merged  # noqa: E402

PACKETS = {"Doc.pdf": {4: {"page": 7, "units": {"0": "Seizure should be considered when X.",
                                                "1": "Injunction should be considered when Y."}},
                       5: {"page": 8, "units": {"0": "A recall may follow."}}}}
ROW = {"id": "w22-q0001", "doc": "Doc.pdf", "passage": 4, "question": "When seizure, and when injunction?",
       "answerable": True, "answers": ["4:0", "4:1"], "parts": 2, "part_answers": [["4:0"], ["4:1"]],
       "related": ["5:0"]}


def errors_of(row: dict) -> list[str]:
    errors: list[str] = []
    check_parts(errors, "q", row)
    return errors


def test_each_part_names_answering_units_and_every_answering_unit_states_a_part():
    assert errors_of(ROW) == []
    assert errors_of(ROW | {"parts": 3})  # the count disagrees with the lists
    assert errors_of(ROW | {"answers": ["4:0"]})  # a part's unit missing from answers
    assert errors_of(ROW | {"answers": ["4:0", "4:1", "5:0"]})  # an answering unit that states no part
    assert errors_of(ROW | {"part_answers": [["4:0"], []]})  # a part with no unit
    assert errors_of(ROW | {"answers": ["4:0"], "parts": 2, "part_answers": [["4:0"], ["4:0"]]})  # one unit for both


def test_a_merged_row_carries_its_units_texts_pages_and_a_batch_prefixed_id():
    row = merged(ROW, PACKETS, "b6")
    assert row["id"] == "b6w22-q0001" and row["page"] == 7 and row["answer_pages"] == [7]
    assert row["answer_texts"] == ["Seizure should be considered when X.", "Injunction should be considered when Y."]
    assert row["related_texts"] == ["A recall may follow."]
    json.dumps(row)  # one JSON line of the batch file
