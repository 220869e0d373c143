"""The embedders' ONNX pass: int8 (served) with the same bits alone and in any batch, fp32 with PyTorch's vectors
within 1e-6, one graph per weights and recipe (built once, never another model's), and PyTorch when the graph cannot
be made or the model is not of the exported recipe (no servers)."""

from __future__ import annotations

import logging

import numpy as np

from citestream.config import get_settings
from citestream.embedding import Embedder, get_embedder, get_relevance_embedder

TEXTS = ["How many days does the agency have to decide whether to file an application?",
         "FDA has 60 days after it receives an NDA to decide whether to file it for review.",
         "Changes should be approved by the quality unit before they are implemented. " * 12,
         "ok"]


def test_the_shipped_settings_embed_in_int8_one_text_a_run(tmp_path):
    """Both embedders a question reaches (retrieval's stock model, the relevance blend's tuned one) run by ONNX
    Runtime in int8 by default: each text in a run of its own (its activations' scales are its own), so a vector
    has the same bits alone and in any batch, and stays near PyTorch's (cosine 0.990–0.995 for these sentences, 0.973
    for the two-letter "ok")."""
    assert get_settings().embedding_runtime == "onnx-int8"
    for served in (get_embedder(), get_relevance_embedder()):
        reference = Embedder(delta=served._model[0].auto_model.state_dict(), name=served.name)  # PyTorch
        got = served.embed(TEXTS)
        assert served._runtime and served._runtime.recipe == "int8", served.name
        assert np.array_equal(got, np.stack([served.embed([t])[0] for t in TEXTS]))
        assert np.array_equal(served.embed(TEXTS[::-1])[::-1], got)
        cosines = (got * reference.embed(TEXTS)).sum(axis=1)
        assert cosines[:3].min() > 0.985 and cosines[3] > 0.96
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_the_fp32_recipe_gives_pytorchs_vectors_alone_or_in_a_batch(tmp_path):
    fp32 = Embedder(onnx_dir=tmp_path / "onnx", onnx_recipe="fp32")
    got = fp32.embed(TEXTS)
    assert fp32._runtime.recipe == "fp32"
    assert np.abs(got - Embedder().embed(TEXTS)).max() < 1e-6
    assert np.abs(got - np.stack([fp32.embed([t])[0] for t in TEXTS])).max() < 1e-6


def test_a_graph_is_built_once_per_weights_and_never_used_for_other_weights(tmp_path):
    folder = tmp_path / "onnx"
    first = Embedder(onnx_dir=folder, onnx_recipe="fp32")
    vectors = first.embed(TEXTS)
    [graph] = folder.glob("*-embedding.onnx")
    built = graph.stat().st_mtime_ns
    again = Embedder(onnx_dir=folder, onnx_recipe="fp32")  # another process, the same weights
    assert np.array_equal(again.embed(TEXTS), vectors)
    assert graph.stat().st_mtime_ns == built and len(list(folder.glob("*-embedding.onnx"))) == 1
    layer = "encoder.layer.5.intermediate.dense.weight"
    changed = dict(first._model[0].auto_model.state_dict())
    changed[layer] = changed[layer] * 1.5  # other weights, the same name
    other = Embedder(delta=changed, onnx_dir=folder, onnx_recipe="fp32")
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
