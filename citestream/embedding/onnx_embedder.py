"""A sentence-transformers embedder's pass (encoder, mean pooling, normalising) run by ONNX Runtime, in int8 or fp32.

Why (issue 53): a question's two embeddings took 27 % of a worker's CPU through PyTorch; the same computation as
one ONNX graph costs less than half of it (a short question's pass 13 → 6 ms of CPU at one thread; `make bench`
prints both) with vectors equal to PyTorch's within 1e-6. Exported with eager attention: the fused attention's
export is not what PyTorch computes. Only the recipe this package ships is exported (a BERT or MPNet encoder, mean
pooling, normalised); any other model stays in PyTorch.

Two recipes (``Settings.embedding_runtime``): ``int8`` (the default) quantises the linear layers' weights per channel
and each activation per run, so it embeds **one text a run**: in a batch a text's vector would move with its
companions. A pass costs half of fp32's again (5.6 → 2.8 ms), vectors sit at cosine 0.990–0.995 of fp32's, and dev
with the corpus ingested under it got the same 342 of 497 right (9 outcomes changed; CPU −19 %). ``fp32`` gives
PyTorch's vectors within 1e-6, in batches.
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

from .onnx_graph import cached_graph, library_versions, session, weights_digest

log = logging.getLogger("citestream.embedding")
RECIPES = {
    "fp32": "fp32-v1: encoder with eager attention, mean pooling over the mask, L2-normalised",
    "int8": "dynamic-int8-v1: fp32-v1 with per-channel int8 weights, activations scaled per run; one text a run",
}
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _pooled(model):
    """``model`` (a loaded ``SentenceTransformer``) as one torch module from token ids to unit vectors, or None when
    its modules are not the encoder, mean pooling and (optionally) normalising this export reproduces."""
    import torch

    modules = list(model)
    names = [type(m).__name__ for m in modules]
    if names not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]):
        return None
    mode = getattr(modules[1], "pooling_mode", None)  # sentence-transformers ≥ 6; before, the mode's string
    if (mode if mode is not None else modules[1].get_pooling_mode_str()) != "mean":
        return None
    encoder = copy.deepcopy(modules[0].auto_model).eval()
    encoder.set_attn_implementation("eager")  # transformers ≥ 4.48; on older ones the export fails: PyTorch stays
    normalise = len(modules) == 3

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            extra = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            tokens = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1) if normalise else pooled

    return Pooled().eval()


class OnnxEmbedder:
    """``forward(texts)``: the model's vectors for a batch of texts, by ONNX Runtime."""

    def __init__(self, model, name: str, folder: Path, threads: int, recipe: str = "int8"):
        if recipe not in RECIPES:
            raise ValueError(f"no embedding recipe {recipe!r}: one of {sorted(RECIPES)}")
        pooled = _pooled(model)
        if pooled is None:
            raise ValueError(f"{name}: not an encoder with mean pooling; kept in PyTorch")
        self._model, self.recipe = model, recipe
        sample = model.preprocess(["a sentence of a document"])
        self.inputs = [n for n in _INPUTS if n in sample]
        key = {"name": name, "weights": weights_digest(pooled), "versions": library_versions(),
               "recipe": RECIPES[recipe], "inputs": self.inputs, "max_length": int(model.max_seq_length or 0)}
        data = cached_graph(key, folder, "embedding", lambda path: self._export(pooled, sample, path))
        self.session = session(data, threads)

    def _export(self, pooled, sample, path: Path) -> None:
        import torch

        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            partial = Path(tmp) / "fp32.onnx"
            with torch.no_grad():
                torch.onnx.export(pooled, tuple(sample[n] for n in self.inputs), str(partial),
                                  input_names=self.inputs, output_names=["embedding"], opset_version=17,
                                  dynamo=False, dynamic_axes={**{n: {0: "batch", 1: "length"} for n in self.inputs},
                                                              "embedding": {0: "batch"}})
            if self.recipe == "int8":
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantized = Path(tmp) / "int8.onnx"
                quantize_dynamic(str(partial), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
                partial = quantized
            os.replace(partial, path)  # atomic: another process sees the whole file or none

    def forward(self, texts: list[str]) -> np.ndarray:
        """Tokenised as the model's own pass tokenises (its truncation length, padding to the longest); int8: one
        text a run, so a text's vector is the same alone and in any batch."""
        if self.recipe == "int8" and len(texts) > 1:
            return np.concatenate([self.forward([t]) for t in texts])
        features = self._model.preprocess(texts)
        feeds = {n: features[n].numpy().astype(np.int64) for n in self.inputs}
        return self.session.run(None, feeds)[0].astype(np.float32)


def onnx_embedder(model, name: str, folder: Path, threads: int, recipe: str = "int8") -> OnnxEmbedder | None:
    """The ONNX runtime of a loaded ``SentenceTransformer``; None (PyTorch stays) when ONNX Runtime is missing, the
    model is not of the exported recipe, or the graph cannot be built or loaded."""
    try:
        return OnnxEmbedder(model, name, folder, threads, recipe)
    except Exception as exc:  # noqa: BLE001 - an optimisation: PyTorch computes the same vectors
        log.warning("ONNX Runtime unavailable for %s (%s: %s); embedding with PyTorch", name, type(exc).__name__, exc)
        return None
