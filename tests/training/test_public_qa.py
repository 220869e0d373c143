"""SQuAD 2.0 in the judge's form: the unit holding the answer span answers, an unanswerable question has none."""

import json

from citestream.training.public_qa import SQUAD_FILE, squad_groups

CONTEXT = ("The plant opened in 1950. It makes steel for ships. Its owner sold it in 1990. "
           "Steel prices rose in 1990 as well.")


def _write(tmp_path, qas):
    path = tmp_path / SQUAD_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": "t", "paragraphs": [{"context": CONTEXT, "qas": qas}]}]}))
    return tmp_path


def _qa(qid, question, answers=(), impossible=False):
    return {"id": qid, "question": question, "is_impossible": impossible,
            "answers": [{"text": t, "answer_start": s} for t, s in answers]}


def test_the_unit_holding_the_answer_at_its_offset_answers(tmp_path):
    second = CONTEXT.rindex("1990")  # "1990" occurs twice: the offset picks the unit
    root = _write(tmp_path, [_qa("a", "When did steel prices rise?", [("1990", second)])])
    (group,) = squad_groups(root, 10, seed=1)
    assert [group.units[i][0] for i in group.answering] == ["Steel prices rose in 1990 as well."]
    assert len(group.units) == 4 and group.kind == "transfer" and group.query == "When did steel prices rise?"


def test_an_offset_that_misses_its_text_falls_back_to_the_first_occurrence(tmp_path):
    root = _write(tmp_path, [_qa("a", "What does it make?", [("steel for ships", 3)])])
    (group,) = squad_groups(root, 10, seed=1)
    assert [group.units[i][0] for i in group.answering] == ["It makes steel for ships."]


def test_an_unanswerable_question_has_no_answering_unit_and_an_answer_across_units_is_left_out(tmp_path):
    root = _write(tmp_path, [_qa("u", "Who bought the plant?", impossible=True),
                             _qa("x", "What happened?", [("1950. It makes", CONTEXT.index("1950"))])])
    groups = squad_groups(root, 10, seed=1)
    assert [(g.id, g.answering) for g in groups] == [("squad:u", ())]
