"""The judge's int8 ONNX runtime: the same scores as PyTorch within the quantisation's error, the same bits for a
pair alone or beside others (dynamic: one pair a run; static: in any batch), built once per weights and libraries
and never loaded when stale or changed, and PyTorch when it cannot be built (no servers)."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

from citestream.relevance import RelevanceModel
from citestream.relevance import onnx_runtime
from citestream.relevance.onnx_runtime import onnx_encoder

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


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One folder of graphs for the tests that only read them (a static build calibrates on the dev pairs)."""
    return tmp_path_factory.mktemp("onnx")


@pytest.mark.parametrize("recipe", ["dynamic", "static"])
def test_int8_scores_match_pytorch_and_the_graph_is_built_once(built, recipe):
    torch_model = RelevanceModel("", embedding_weight=0.0)
    onnx_model = RelevanceModel("", embedding_weight=0.0, onnx_dir=built, onnx_recipe=recipe)
    expected = torch_model.cross_pairs(PAIRS)
    got = onnx_model.cross_pairs(PAIRS)
    assert np.abs(got - expected).max() < 0.05
    assert np.argmax(got[:2]) == np.argmax(expected[:2]) == 0
    graphs = set(built.glob("*-int8.onnx"))
    stamps = {g: g.stat().st_mtime_ns for g in graphs}
    again = RelevanceModel("", embedding_weight=0.0, onnx_dir=built, onnx_recipe=recipe)  # another process
    assert np.array_equal(again.cross_pairs(PAIRS), got)
    assert {g: g.stat().st_mtime_ns for g in built.glob("*-int8.onnx")} == stamps


def test_a_pairs_score_does_not_depend_on_the_pairs_scored_beside_it(built):
    """Dynamic int8 scales activations over its whole input, so the runtime scores one pair a run."""
    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=built)
    alone = model.cross_pairs(PAIRS[:1])
    long_text = "The boiling point of liquid nitrogen is minus 196 degrees Celsius at sea level. " * 6
    crowded = model.cross_pairs(PAIRS[:1] + [("Who won the 1998 football world cup?", long_text)] * 5)
    assert crowded[0] == alone[0]


def test_a_pairs_static_int8_score_has_the_same_bits_alone_and_in_any_batch(built):
    """Questions in flight together share the judge's runs; an answer must not change with its companions. Static
    int8 fixes every scale at calibration, so a pair's logit is the same alone, beside long or short pairs, at any
    place in a run, and in a run longer than one pass (``BATCH``)."""
    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=built, onnx_recipe="static")
    alone = np.concatenate([model.cross_pairs([p]) for p in PAIRS])
    long_text = "The boiling point of liquid nitrogen is minus 196 degrees Celsius at sea level. " * 6
    crowded = model.cross_pairs(PAIRS[:1] + [("Who won the 1998 football world cup?", long_text)] * 5)
    assert crowded[0] == alone[0]
    together = model.cross_pairs(PAIRS)
    assert np.array_equal(together, alone)
    reversed_ = model.cross_pairs(list(reversed(PAIRS)))
    assert np.array_equal(reversed_[::-1], alone)
    noise = [(f"Question {i} about something else entirely?", "A sentence. " * (1 + i % 9)) for i in range(70)]
    many = model.cross_pairs(noise[:35] + PAIRS + noise[35:])
    assert np.array_equal(many[35:35 + len(PAIRS)], alone)


def _shifted(encoder, by: float):
    """The same model with other weights (its head's bias moved by ``by``) under the same name."""
    import torch

    other = copy.deepcopy(encoder)
    with torch.no_grad():
        other.model.classifier.bias += by
    return other


def test_a_graph_of_other_weights_or_libraries_is_never_loaded(tmp_path, monkeypatch):
    """The cache is keyed by the weights' hash and the library versions, not by the model's name: after the weights
    change under the same name, or an onnxruntime upgrade, the graph is built again (issue 54 item 8)."""
    encoder = RelevanceModel("", embedding_weight=0.0)._encoder
    folder = tmp_path / "onnx"
    first = onnx_encoder(encoder, "judge", folder, 1, 256)
    assert first is not None
    changed = _shifted(encoder, 3.0)
    second = onnx_encoder(changed, "judge", folder, 1, 256)
    assert second is not None
    got = second.logits(PAIRS) - first.logits(PAIRS)
    assert np.allclose(got, 3.0, atol=0.3)  # the new weights' logits, not the stale graph's
    assert len(list(folder.glob("*-int8.onnx"))) == 2
    monkeypatch.setattr(onnx_runtime, "library_versions", lambda: {"onnxruntime": "0-upgraded"})
    onnx_encoder(encoder, "judge", folder, 1, 256)
    assert len(list(folder.glob("*-int8.onnx"))) == 3


def test_a_changed_graph_is_rebuilt_never_used(tmp_path, caplog):
    """A graph whose bytes are not the ones recorded when it was built (another model's graph put in its place, a
    truncated file) is built again from the weights; its scores are the model's."""
    encoder = RelevanceModel("", embedding_weight=0.0)._encoder
    folder, elsewhere = tmp_path / "onnx", tmp_path / "other"
    expected = onnx_encoder(encoder, "judge", folder, 1, 256).logits(PAIRS)
    [graph] = folder.glob("*-int8.onnx")
    onnx_encoder(_shifted(encoder, 3.0), "judge", elsewhere, 1, 256)
    [foreign] = elsewhere.glob("*-int8.onnx")
    graph.write_bytes(foreign.read_bytes())  # a valid graph, of other weights
    with caplog.at_level(logging.WARNING, logger="citestream.relevance"):
        again = onnx_encoder(encoder, "judge", folder, 1, 256)
    assert "does not match its recorded digest" in caplog.text
    assert np.array_equal(again.logits(PAIRS), expected)
    graph.write_bytes(graph.read_bytes()[:1000])  # truncated
    assert np.array_equal(onnx_encoder(encoder, "judge", folder, 1, 256).logits(PAIRS), expected)


def test_a_graph_that_cannot_be_built_falls_back_to_pytorch(tmp_path, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=blocked / "onnx")
    with caplog.at_level(logging.WARNING, logger="citestream.relevance"):
        scores = model.cross_pairs(PAIRS[:2])
    assert "scoring with PyTorch" in caplog.text
    assert np.allclose(scores, RelevanceModel("", embedding_weight=0.0).cross_pairs(PAIRS[:2]), atol=1e-5)


def test_a_pairs_score_has_the_same_bits_in_any_lane(built):
    """A worker's judge runs ``judge_lanes`` pairs at once (each its own run at one thread), so a question's pairs use
    both cores; which lane ran a pair, and what ran beside it, does not change its bits."""
    from citestream.config import get_settings
    from citestream.relevance.scorer import relevance_model_for

    noise = [(f"Question {i} about something else entirely?", "A sentence. " * (1 + i % 9)) for i in range(30)]
    pairs = noise[:15] + PAIRS + noise[15:]
    one_lane = RelevanceModel("", embedding_weight=0.0, onnx_dir=built).cross_pairs(pairs)
    two_lanes = RelevanceModel("", embedding_weight=0.0, onnx_dir=built, lanes=2)
    assert np.array_equal(two_lanes.cross_pairs(pairs), one_lane)
    assert two_lanes._onnx_runtime()._lanes is not None
    served = relevance_model_for(get_settings())
    assert served._lanes == get_settings().judge_lanes == 2


def test_the_judges_lanes_are_named_in_proc_so_their_cpu_can_be_told_apart(built):
    """The benches (and ``top -H``) read the lanes' CPU from /proc by name: the worker's judge runs there."""
    import os

    from citestream.infra.procfs import named_threads_cpu
    from citestream.relevance.onnx_runtime import LANE

    model = RelevanceModel("", embedding_weight=0.0, onnx_dir=built, lanes=2)
    model.cross_pairs(PAIRS * 4)
    assert named_threads_cpu(os.getpid(), LANE) > 0
    assert named_threads_cpu(os.getpid(), "no-such-thread") == 0
