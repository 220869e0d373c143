"""A model pass gives the same bits whatever thread count the process was left at (``Settings.model_threads``)."""

from __future__ import annotations

import numpy as np

from citestream.config import get_settings
from citestream.embedding import Embedder


def test_an_embedding_has_the_same_bits_after_the_process_thread_count_changed():
    """Training sets torch's thread count for the whole process and leaves it; the embedder pins its own count
    before each pass, so a question's vector (and the retrieval it drives) does not depend on what ran before. The
    served embedders run by ONNX Runtime, whose thread count is fixed per session; this is the PyTorch pass
    (``CITESTREAM_EMBEDDING_RUNTIME=torch``, and the embedders training tunes)."""
    import torch

    embedder = Embedder(threads=get_settings().model_threads)  # no onnx_dir: PyTorch
    assert embedder._onnx_runtime() is None
    texts = ["Within how many days must a complaint investigation be closed under the quality system regulation?",
             "Who signs the batch record?"] * 4
    before = embedder.embed(texts)
    left_at = torch.get_num_threads()
    try:
        torch.set_num_threads(2 if get_settings().model_threads == 1 else 1)
        after = embedder.embed(texts)
    finally:
        torch.set_num_threads(left_at)
    assert torch.get_num_threads() == left_at
    assert np.array_equal(before, after)
    assert embedder.threads == get_settings().model_threads
