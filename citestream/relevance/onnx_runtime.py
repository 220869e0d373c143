"""The cross-encoder run by ONNX Runtime with its linear layers in int8: about half the CPU of PyTorch fp32.

Why: the judge reads every (question, unit) pair it scores at question time (nothing about a pair can be computed
at ingest), so its forward pass is most of a question's CPU. Two recipes (``CITESTREAM_JUDGE_RUNTIME``):

* **dynamic** (``onnx-int8``, the default): each activation's scale is taken from its input, so the runtime scores
  one pair a run (in a batch a pair's score would move with its companions, 0.01 measured). ~19 ms a pair.
* **static** (``onnx-int8-static``): every activation's scale is calibrated once, on dev pairs of the written
  supervision (``data/judge_calibration.json``, ``scripts/judge_calibration_pairs.py``), and stored in the graph;
  integer products are exact and everything else works per row, so pairs of several questions share a run and
  each gets the bits it gets alone (tested). Each layer's feed-forward output stays fp32 (GELU's long tail does
  not fit one fixed scale: in int8 the probabilities moved by 0.11 on average), so a pair costs ~25 ms in runs of
  32: batch-safe, but dearer than dynamic (docs/experiments/2026-11-29-speed.md).

The graph is built from the loaded model the first time a process needs it (a worker builds it before it says it is
ready, ``Deps.warm``) and kept in the state folder (``embedding.onnx_graph``: keyed by the weights' SHA-256, the
libraries' versions, the recipe and its calibration pairs; its digest checked on the bytes loaded). A failure to
build or load falls back to PyTorch, with a warning: the scores are the model's either way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..embedding.onnx_graph import cached_graph, library_versions, session, weights_digest

log = logging.getLogger("citestream.relevance")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
RECIPES = {
    "dynamic": "dynamic-int8-v1: per-channel int8 weights, activations scaled per run; one pair a run",
    "static": "static-int8-v1: QDQ, per-channel int8 weights, uint8 activations by min-max, FFN output in fp32",
}
CALIBRATION = Path(__file__).resolve().parents[1] / "data" / "judge_calibration.json"
KEEP_FP32 = re.compile(r"layer\.\d+/output/dense/MatMul$")
"""The nodes left in fp32: each layer's feed-forward output (its input is GELU's long tail)."""
BATCH = 32
"""Pairs per run of the static graph: length-sorted by the caller, so a run pads little. The dynamic graph runs one
pair a run (its scales are taken over the whole input: in a batch a pair's score would move with its companions)."""


def graph_key(model, name: str, recipe: str) -> dict:
    """Everything the graph's bits depend on; its hash names the file."""
    versions = library_versions()
    calibration = hashlib.sha256(CALIBRATION.read_bytes()).hexdigest()
    return {"name": name, "weights": weights_digest(model), "versions": versions,
            "recipe": RECIPES[recipe], "calibration": calibration if recipe == "static" else ""}


def calibration_pairs() -> list[tuple[str, str]]:
    pairs = json.loads(CALIBRATION.read_text())["pairs"]
    return [(str(q), str(t)) for q, t in pairs]


def _export(model, tokenizer, path: Path, max_length: int, recipe: str) -> None:
    """fp32 ONNX of ``model`` with dynamic batch and length, then int8: dynamic, or static calibrated on the dev
    pairs."""
    import onnx
    import torch
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_dynamic, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    sample = tokenizer(["a question"], ["a sentence of a document"], return_tensors="pt")
    names = [n for n in _INPUTS if n in sample]

    class Pairs(CalibrationDataReader):
        def __init__(self):
            self._pairs = iter(calibration_pairs())

        def get_next(self):
            pair = next(self._pairs, None)
            if pair is None:
                return None
            enc = tokenizer([pair[0]], [pair[1]], truncation=True, max_length=max_length, return_tensors="np")
            return {n: enc[n].astype(np.int64) for n in names}

    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        fp32, prepared = Path(tmp) / "fp32.onnx", Path(tmp) / "prepared.onnx"
        with torch.no_grad():
            torch.onnx.export(model, tuple(sample[n] for n in names), str(fp32), input_names=names,
                              output_names=["logits"], opset_version=17, dynamo=False,
                              dynamic_axes={**{n: {0: "batch", 1: "length"} for n in names}, "logits": {0: "batch"}})
        partial = Path(tmp) / "int8.onnx"
        if recipe == "dynamic":
            quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
            os.replace(partial, path)
            return
        quant_pre_process(str(fp32), str(prepared), skip_symbolic_shape=True)
        keep = [n.name for n in onnx.load(str(prepared)).graph.node if KEEP_FP32.search(n.name)]
        quantize_static(str(prepared), str(partial), Pairs(), quant_format=QuantFormat.QDQ, per_channel=True,
                        weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8,
                        calibrate_method=CalibrationMethod.MinMax, op_types_to_quantize=["MatMul", "Gemm"],
                        nodes_to_exclude=keep, extra_options={"WeightSymmetric": True, "ActivationSymmetric": False})
        os.replace(partial, path)  # atomic: another process sees the whole file or none


def built_graph(model, tokenizer, name: str, folder: Path, max_length: int, recipe: str) -> bytes:
    """The verified int8 graph of ``model``: loaded when its key and digest match, built (and recorded) otherwise."""
    return cached_graph(graph_key(model, name, recipe), folder, "int8",
                        lambda path: _export(model, tokenizer, path, max_length, recipe))


LANE = "judge-lane"
"""The name of the judge's lane threads, in Python and in /proc: top -H, and the benches, tell their CPU apart."""


def _name_lane() -> None:
    """Give this lane thread its name in /proc too (Python 3.11 names threads only for itself)."""
    try:
        Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text(LANE)
    except OSError:  # not Linux, or /proc read-only: only the figures lose the name
        pass


class OnnxCrossEncoder:
    """``logits(pairs)`` of a Hugging Face sequence classifier, computed by ONNX Runtime in int8 (``recipe``:
    "dynamic" or "static"), ``lanes`` runs at once (``Settings.judge_lanes``)."""

    def __init__(self, model, tokenizer, name: str, folder: Path, threads: int, max_length: int,
                 recipe: str = "dynamic", lanes: int = 1):
        if recipe not in RECIPES:
            raise ValueError(f"no int8 recipe {recipe!r}: one of {sorted(RECIPES)}")
        self.tokenizer, self.max_length = tokenizer, max_length
        self.batch = BATCH if recipe == "static" else 1
        data = built_graph(model, tokenizer, name, folder, max_length, recipe)
        self.session = session(data, threads)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self._lanes = (ThreadPoolExecutor(lanes, thread_name_prefix=LANE, initializer=_name_lane) if lanes > 1
                       else None)

    def _feeds(self, run: list[tuple[str, str]]) -> dict[str, np.ndarray]:
        enc = self.tokenizer([q for q, _ in run], [t for _, t in run], truncation=True, padding=True,
                             max_length=self.max_length, return_tensors="np")
        return {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}

    def _logits(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        return self.session.run(None, feeds)[0].reshape(-1)

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Static: runs of ``BATCH`` pairs, padded to the longest of the run; a pair's logit has the same bits in
        any run (fixed scales, exact integer products, row-wise everything else; padding is masked out). Dynamic: one
        pair a run, so its scales are its own. Runs go ``lanes`` at a time, each at the session's one thread: a
        run's bits do not depend on which lane ran it. Tokenised here first: a fast tokenizer sets its truncation
        on every call and refuses a second thread meanwhile ("Already borrowed")."""
        feeds = [self._feeds(pairs[start:start + self.batch]) for start in range(0, len(pairs), self.batch)]
        if self._lanes is not None and len(feeds) > 1:
            out = list(self._lanes.map(self._logits, feeds))
        else:
            out = [self._logits(f) for f in feeds]
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def onnx_encoder(encoder, key: str, folder: Path, threads: int, max_length: int,
                 recipe: str = "dynamic", lanes: int = 1) -> OnnxCrossEncoder | None:
    """The int8 runtime for a loaded sentence-transformers ``CrossEncoder``; None (PyTorch stays) when ONNX Runtime
    is missing or the graph cannot be built or loaded."""
    try:
        return OnnxCrossEncoder(encoder.model, encoder.tokenizer, key, folder, threads, max_length, recipe, lanes)
    except Exception as exc:  # noqa: BLE001 - an optimisation: PyTorch computes the same scores
        log.warning("ONNX Runtime unavailable for the judge (%s: %s); scoring with PyTorch", type(exc).__name__, exc)
        return None
