"""The judge's int8 ONNX runtime: the same scores as PyTorch within the quantisation's error, built once and
reused, and PyTorch when it cannot be built (no servers)."""

from __future__ import annotations

import logging

import numpy as np

from citestream.relevance import RelevanceModel

PAIRS = [
    ("How many days does FDA have to decide whether to file an NDA?",
     "FDA has 60 days after it receives an NDA to decide whether to file it for review."),
    ("How many days does FDA have to decide whether to file an NDA?",
     "The boiling point of liquid nitrogen is minus 196 degrees Celsius."),
    ("Who approves changes to validated analytical procedures?",
     "Changes should be approved by the quality unit before they are implemented."),
    ("Who approves changes to validated analytical procedures?",
     "Analytical procedures should be validated unless the method employed is included in the pharmacopoeia."),
]


def test_int8_scores_match_pytorch_and_the_graph_is_built_once(tmp_path):
    torch_model = RelevanceModel("", embedding_weight=0.0)
    onnx_model = RelevanceModel("", embedding_weight=0.0, onnx_dir=tmp_path)
    expected = torch_model.cross_pairs(PAIRS)
    got = onnx_model.cross_pairs(PAIRS)
    assert np.abs(got - expected).max() < 0.05
    assert np.argmax(got[:2]) == np.argmax(expected[:2]) == 0
    built = list(tmp_path.glob("*-int8.onnx"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    again = RelevanceModel("", embedding_weight=0.0, onnx_dir=tmp_path)  # another process would load it
    assert np.allclose(again.cross_pairs(PAIRS), got)
    assert built[0].stat().st_mtime_ns == stamp


def test_a_pairs_int8_score_does_not_depend_on_the_pairs_scored_beside_it(tmp_path):
    """Questions in flight together share the judge's calls; an answer must not change with its companions (dynamic
    int8 scales activations over its whole input, so the runtime scores one pair a run)."""
    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=tmp_path)
    alone = model.cross_pairs(PAIRS[:1])
    long_text = "The boiling point of liquid nitrogen is minus 196 degrees Celsius at sea level. " * 6
    crowded = model.cross_pairs(PAIRS[:1] + [("Who won the 1998 football world cup?", long_text)] * 5)
    assert crowded[0] == alone[0]


def test_a_graph_that_cannot_be_built_falls_back_to_pytorch(tmp_path, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=blocked / "onnx")
    with caplog.at_level(logging.WARNING, logger="citestream.relevance"):
        scores = model.cross_pairs(PAIRS[:2])
    assert "scoring with PyTorch" in caplog.text
    assert np.allclose(scores, RelevanceModel("", embedding_weight=0.0).cross_pairs(PAIRS[:2]), atol=1e-5)
