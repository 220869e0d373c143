"""Issue 53 item 3: the judge distilled into fewer layers, trained on the full judge's scores; issue 52: a judge of
another encoder (all-mpnet-base-v2) taught into the served one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citestream.embedding import model_path
from citestream.relevance.scorer import METADATA_FILE, SHIPPED_DIR, load_compact
from citestream.training.judge import (Group, JudgeConfig, _group_loss, every_other_layer, is_full, load_judge,
                                       train_judge, unit_scores)

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
    meta = train_judge(GROUPS, tmp_path / "student", config, teachers=[SHIPPED_DIR])
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


def test_a_judge_of_another_encoder_is_saved_whole_and_taught_into_the_served_one(tmp_path):
    """A transformers folder as ``base`` (here MiniLM-L6's own, standing in for all-mpnet-base-v2: the same path, a
    tokenizer and embeddings of its own) gives a full-format judge; as ``teacher`` it is read with its own tokenizer,
    and the compact student from ``base`` stays compact and learns to decide as it does."""
    config = JudgeConfig(epochs=20, max_length=64, lr=1e-4, warmup=0.0, threads=1)
    train_judge(GROUPS, tmp_path / "teacher", config, base=Path(model_path()))
    assert is_full(tmp_path / "teacher") and not (tmp_path / "teacher" / METADATA_FILE).exists()
    teacher, teacher_tokenizer = load_judge(tmp_path / "teacher", 64)
    taught = unit_scores(teacher, teacher_tokenizer, GROUPS, 64)
    assert all(int(np.argmax(t)) == 0 for t in taught if len(t) > 1)

    meta = train_judge(GROUPS, tmp_path / "student", config, base=SHIPPED_DIR, teachers=[tmp_path / "teacher"])
    assert meta["layers"] == 6 and meta["teacher"] == str(tmp_path / "teacher")
    student, _ = load_compact(tmp_path / "student", 64)
    learnt = unit_scores(student.model, student.tokenizer, GROUPS, 64)
    for t, s in zip(taught, learnt):
        if len(t) > 1:
            assert int(np.argmax(s)) == int(np.argmax(t))
        if abs(t.max() - 0.5) > 0.1:
            assert (s.max() >= 0.5) == (t.max() >= 0.5)


def test_two_teachers_teach_the_mean_of_their_logits():
    """``--teacher`` twice (the shipped judge and the mpnet one, issue 52) teaches their blend: the loss is the one a
    single teacher with the mean of their logits would give. Here the second teacher is the first with its head's bias
    raised by 2, so the mean is the first raised by 1."""
    import torch

    def shifted(by: float):
        encoder, _ = load_compact(SHIPPED_DIR, 64)
        with torch.no_grad():
            encoder.model.classifier.bias += by
        return encoder.model, encoder.tokenizer

    student, tokenizer = shifted(0.0)
    config = JudgeConfig(max_length=64)
    with torch.no_grad():
        blended = _group_loss(student, tokenizer, GROUPS, config, [shifted(0.0), shifted(2.0)])
        mean = _group_loss(student, tokenizer, GROUPS, config, [shifted(1.0)])
        first = _group_loss(student, tokenizer, GROUPS, config, [shifted(0.0)])
    assert float(blended) == pytest.approx(float(mean), rel=1e-5)
    assert abs(float(blended) - float(first)) > 1e-3
