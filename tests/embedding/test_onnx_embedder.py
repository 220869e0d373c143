"""The embedders' ONNX pass: PyTorch's vectors within 1e-6, one graph per weights (built once, never another
model's), and PyTorch when the graph cannot be made or the model is not of the exported recipe (no servers)."""

from __future__ import annotations

import logging

import numpy as np

from citestream.config import get_settings
from citestream.embedding import Embedder, get_embedder, get_relevance_embedder

TEXTS = ["How many days does the agency have to decide whether to file an application?",
         "FDA has 60 days after it receives an NDA to decide whether to file it for review.",
         "Changes should be approved by the quality unit before they are implemented. " * 12,
         "ok"]


def test_the_shipped_settings_embed_with_onnx_and_give_pytorchs_vectors():
    """Both embedders a question reaches (retrieval's stock model, the relevance blend's tuned one) run by ONNX
    Runtime by default, and give the vectors PyTorch gives, alone or padded in a batch."""
    assert get_settings().embedding_runtime == "onnx"
    for served in (get_embedder(), get_relevance_embedder()):
        reference = Embedder(delta=served._model[0].auto_model.state_dict(), name=served.name)  # PyTorch
        got = served.embed(TEXTS)
        assert served._runtime, served.name
        assert np.abs(got - reference.embed(TEXTS)).max() < 1e-6
        alone = np.stack([served.embed([t])[0] for t in TEXTS])
        assert np.abs(got - alone).max() < 1e-6


def test_a_graph_is_built_once_per_weights_and_never_used_for_other_weights(tmp_path):
    folder = tmp_path / "onnx"
    first = Embedder(onnx_dir=folder)
    vectors = first.embed(TEXTS)
    [graph] = folder.glob("*-embedding.onnx")
    built = graph.stat().st_mtime_ns
    again = Embedder(onnx_dir=folder)  # another process, the same weights
    assert np.array_equal(again.embed(TEXTS), vectors)
    assert graph.stat().st_mtime_ns == built and len(list(folder.glob("*-embedding.onnx"))) == 1
    layer = "encoder.layer.5.intermediate.dense.weight"
    changed = dict(first._model[0].auto_model.state_dict())
    changed[layer] = changed[layer] * 1.5  # other weights, the same name
    other = Embedder(delta=changed, onnx_dir=folder)
    expected = Embedder(delta=changed).embed(TEXTS)
    assert np.abs(other.embed(TEXTS) - expected).max() < 1e-6
    assert np.abs(expected - vectors).max() > 1e-3
    assert len(list(folder.glob("*-embedding.onnx"))) == 2


def test_pytorch_embeds_when_the_graph_cannot_be_made(tmp_path, caplog):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the folder should be")
    embedder = Embedder(onnx_dir=blocked / "onnx")
    with caplog.at_level(logging.WARNING, logger="citestream.embedding"):
        got = embedder.embed(TEXTS[:2])
    assert "embedding with PyTorch" in caplog.text
    assert np.array_equal(got, Embedder().embed(TEXTS[:2]))


def test_a_model_the_export_does_not_reproduce_stays_in_pytorch(tmp_path, caplog):
    """The graph is the encoder, mean pooling and normalising; a model pooled otherwise is never exported as if it
    were mean-pooled."""
    embedder = Embedder(onnx_dir=tmp_path / "onnx")
    embedder._model[1].pooling_mode = "cls"
    with caplog.at_level(logging.WARNING, logger="citestream.embedding"):
        embedder.embed(TEXTS[:1])
    assert "not an encoder with mean pooling" in caplog.text
    assert embedder._runtime is False and not (tmp_path / "onnx").exists()
