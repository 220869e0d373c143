"""Issue 53 item 3: the judge distilled into fewer layers, trained on the full judge's scores."""

from __future__ import annotations

import numpy as np

from citestream.relevance.scorer import SHIPPED_DIR, load_compact
from citestream.training.judge import Group, JudgeConfig, every_other_layer, train_judge, unit_scores

GROUPS = [
    Group("q1", "How long are records kept?", (("Records are kept for two years after release.",),
                                               ("The firm names a quality unit.",)), (0,)),
    Group("q2", "Who approves the protocol?", (("The quality unit approves each protocol.",),
                                               ("Samples are stored at 5 °C.",)), (0,)),
    Group("q3", "What is the boiling point of nitrogen?", (("Batches are released by the quality unit.",),), ()),
    Group("q4", "When is a deviation reported?", (("A deviation is reported within 15 days.",),
                                                  ("Training is documented.",)), (0,)),
]


def test_every_other_layer_keeps_an_even_spread_from_the_first():
    encoder, _ = load_compact(SHIPPED_DIR, 128)
    layers = list(encoder.model.bert.encoder.layer)
    every_other_layer(encoder.model, 3)
    assert list(encoder.model.bert.encoder.layer) == [layers[0], layers[2], layers[4]]
    assert encoder.model.config.num_hidden_layers == 3


def test_a_distilled_judge_has_the_layers_asked_for_and_serves_through_the_loader(tmp_path):
    config = JudgeConfig(epochs=20, layers=3, max_length=64, lr=1e-4, warmup=0.0, threads=1)
    meta = train_judge(GROUPS, tmp_path / "student", config, teacher=SHIPPED_DIR)
    assert meta["layers"] == 3 and meta["teacher"] == str(SHIPPED_DIR)
    student, _ = load_compact(tmp_path / "student", 64)
    teacher, _ = load_compact(SHIPPED_DIR, 64)
    assert len(student.model.bert.encoder.layer) == 3 and len(teacher.model.bert.encoder.layer) == 6
    taught = unit_scores(teacher.model, teacher.tokenizer, GROUPS, 64)
    learnt = unit_scores(student.model, student.tokenizer, GROUPS, 64)
    # Started from every other layer, the student scores every unit alike (~0.37); trained, it decides as its
    # teacher: the same unit clearly first, and the same side of 0.5 wherever the teacher is not near it.
    for t, s in zip(taught, learnt):
        if len(t) > 1:
            assert int(np.argmax(s)) == int(np.argmax(t)) and np.ptp(s) > 0.1
        if abs(t.max() - 0.5) > 0.1:
            assert (s.max() >= 0.5) == (t.max() >= 0.5)
