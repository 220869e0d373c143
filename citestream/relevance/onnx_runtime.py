"""The cross-encoder run by ONNX Runtime with its linear layers in int8: half the CPU of the same model in PyTorch.

Why: the judge reads every (question, unit) pair it scores at question time (nothing about a pair can be computed
at ingest), so its forward pass is most of a question's CPU. Measured here (MiniLM-L6, 2 threads, pairs of
~100 tokens): PyTorch fp32 16.8 ms a pair, ONNX fp32 15.5, ONNX int8 with per-channel weights 7.8; the int8
probabilities differ from fp32 by at most 0.01 (docs/experiments/2026-11-27-judge.md measures the outcomes).

The int8 graph is made from the loaded model the first time a process needs it and kept in the state folder under
a name derived from the weights (``<state>/models/onnx/<key>.onnx``): later processes load it. A failure to build
or load it falls back to PyTorch, with a warning: the scores are the model's either way.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from pathlib import Path

import numpy as np

log = logging.getLogger("citestream.relevance")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_build_lock = threading.Lock()


def _export(model, tokenizer, path: Path) -> None:
    """fp32 ONNX of ``model`` with dynamic batch and length, then dynamic int8 quantization per channel."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    sample = tokenizer(["a question"], ["a sentence of a document"], return_tensors="pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        names = [n for n in _INPUTS if n in sample]
        with torch.no_grad():
            torch.onnx.export(model, tuple(sample[n] for n in names), str(fp32), input_names=names,
                              output_names=["logits"], opset_version=17, dynamo=False,
                              dynamic_axes={**{n: {0: "batch", 1: "length"} for n in names}, "logits": {0: "batch"}})
        partial = Path(tmp) / "int8.onnx"
        quantize_dynamic(str(fp32), str(partial), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(partial, path)  # atomic: another process sees the whole file or none


class OnnxCrossEncoder:
    """``logits(pairs)`` of a Hugging Face sequence classifier, computed by ONNX Runtime in int8."""

    def __init__(self, model, tokenizer, key: str, folder: Path, threads: int, max_length: int):
        import onnxruntime as ort

        self.tokenizer, self.max_length = tokenizer, max_length
        path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}-int8.onnx"
        with _build_lock:
            if not path.is_file():
                _export(model, tokenizer, path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.path = path

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """One pair a run. Dynamic int8 quantises each activation with a scale taken over the whole input, so in a
        batch a pair's score would move with its companions (0.01 measured): alone, a question's answer does not
        depend on what else is in flight, and a pair costs no more CPU than in a batch of 64 (no padding)."""
        out = []
        for question, text in pairs:
            enc = self.tokenizer([question], [text], truncation=True, max_length=self.max_length,
                                 return_tensors="np")
            feeds = {k: v.astype(np.int64) for k, v in enc.items() if k in self.inputs}
            out.append(self.session.run(None, feeds)[0].reshape(-1))
        return np.concatenate(out).astype(np.float64) if out else np.zeros(0)


def onnx_encoder(encoder, key: str, folder: Path, threads: int, max_length: int) -> OnnxCrossEncoder | None:
    """The int8 runtime for a loaded sentence-transformers ``CrossEncoder``; None (PyTorch stays) when ONNX Runtime
    is missing or the graph cannot be built or loaded."""
    try:
        return OnnxCrossEncoder(encoder.model, encoder.tokenizer, key, folder, threads, max_length)
    except Exception as exc:  # noqa: BLE001 - an optimisation: PyTorch computes the same scores
        log.warning("ONNX Runtime unavailable for the judge (%s: %s); scoring with PyTorch", type(exc).__name__, exc)
        return None
