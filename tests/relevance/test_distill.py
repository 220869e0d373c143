"""The distilled model: pairs as the flow gives them, a student with every other layer, an artifact that loads."""

from __future__ import annotations

import json

import numpy as np

from citestream.relevance import RelevanceModel
from citestream.relevance.model import METADATA_FILE, SHIPPED_DIR
from citestream.relevance.training.corpus import CorpusChunk
from citestream.relevance.training.distill import DistillConfig, agreement, distill, distillation_pairs
from citestream.text import scored_units, sentence_units

TEXTS = [
    "FDA has 60 days after it receives an NDA to decide whether to file it for review. "
    "The filing review checks that the application is complete enough for a substantive review.",
    "Stability studies should cover the proposed shelf life of the drug product under storage conditions. "
    "Accelerated studies at elevated temperature support a provisional expiration date for the product.",
    "Sponsors may request a meeting with the review division before they submit the application. "
    "The meeting request lists the questions the sponsor wants to discuss with the division.",
]
CHUNKS = [CorpusChunk("nda.pdf", "FDA", i + 1, "", i, text, tuple(sentence_units(text)))
          for i, text in enumerate(TEXTS)]
QUESTIONS = ["How long does FDA take to decide on filing an NDA?", "How long should stability studies run?",
             "Can a sponsor meet the review division?", "What is the capital of France?"]


def test_pairs_are_the_closest_units_then_some_further(embedder):
    config = DistillConfig(closest=2, further=1, reach=6)
    groups = distillation_pairs(CHUNKS, QUESTIONS, embedder.embed, config)
    units = {u for c in CHUNKS for u in scored_units(c.text)}
    assert len(groups) == len(QUESTIONS) and all(len(g) == 3 for g in groups)
    assert all(p.question == q and p.text in units for g, q in zip(groups, QUESTIONS) for p in g)
    first = groups[0][0].text
    assert "60 days" in first  # the unit the embedding ranks closest to the question comes first
    assert groups == distillation_pairs(CHUNKS, QUESTIONS, embedder.embed, config)  # seeded


def test_a_student_of_every_other_layer_learns_and_loads(embedder, tmp_path):
    config = DistillConfig(layers=3, closest=3, further=1, reach=6, held_out=0.25, epochs=1.0, batch_size=4)
    groups = distillation_pairs(CHUNKS, QUESTIONS, embedder.embed, config)
    meta = distill(SHIPPED_DIR, groups, tmp_path, config)
    assert meta["layers"] == 3 and meta["teacher_layers_kept"] == [0, 2, 4]
    assert meta["held_out"]["questions"] == 1 and meta["pairs"] == 3 * 4
    assert json.loads((tmp_path / METADATA_FILE).read_text())["teacher_delta_sha256"]
    student = RelevanceModel(str(tmp_path), embedding_weight=0)
    assert len(student._encoder.model.bert.encoder.layer) == 3
    scores = student.score(QUESTIONS[0], [TEXTS[0], TEXTS[1]])
    assert np.all((scores >= 0) & (scores <= 1))


def test_agreement_counts_the_same_best_unit_per_question():
    teacher = np.array([3.0, 1.0, 0.0, 2.0, 5.0])
    student = np.array([2.0, 1.5, 0.0, 4.0, 3.0])
    figures = agreement(teacher, student, [3, 2])
    assert figures["same_best_unit"] == 0.5 and figures["mean_abs_logit_diff"] == 1.1
