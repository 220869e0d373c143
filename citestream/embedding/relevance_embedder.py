"""The relevance blend's embedding model: where it is, its name (the key of the sentence vectors ingest keeps for
it), and loading it over the base model its metadata names."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..core.hashing import file_sha256
from .embedder import MODEL_NAME, Embedder, embedding_runtime, model_path


RELEVANCE_EMBEDDER_DIR = Path(__file__).resolve().parents[1] / "relevance" / "embedder_weights"
"""The relevance blend's embedding model (``citestream scorer embedder``): MiniLM-L6 tuned on the corpus' questions,
stored as its encoder layers in float16 over this package's token embeddings. Retrieval keeps the stock model."""
DELTA_FILE = "delta.safetensors"  # a trained model's weights, over the base package's (the cross-encoder's too)
METADATA_FILE = "citestream-model.json"  # its training record


def base_name(folder: Path) -> str:
    """How an artifact names the base model it was trained over (its ``base`` in the metadata): the folder's
    name, or this package's model name for the package's own folder."""
    return MODEL_NAME if folder.resolve() == Path(model_path()).resolve() else folder.name


def base_path(name: str) -> str:
    """Where the base model an artifact names is: the package's for all-MiniLM-L6-v2, else the state folder's
    ``models/<name>`` (``make mpnet`` puts all-mpnet-base-v2 there)."""
    from ..config import get_settings

    if name == MODEL_NAME:
        return model_path()
    folder = get_settings().state_dir / "models" / name
    if not (folder / "modules.json").is_file():
        raise FileNotFoundError(f"no base model {name} in {folder} (all-mpnet-base-v2: `make mpnet`)")
    return str(folder)


def relevance_embedder_dir() -> Path:
    from ..config import get_settings

    return Path(get_settings().relevance_embedder or RELEVANCE_EMBEDDER_DIR)


def relevance_embedder_name() -> str:
    """Name and weights' hash, without loading the model: the key of the sentence vectors ingest keeps for it."""
    return _embedder_name(relevance_embedder_dir())


@lru_cache(maxsize=4)
def _embedder_name(folder: Path) -> str:
    if (folder / DELTA_FILE).is_file():
        meta = json.loads((folder / METADATA_FILE).read_text())
        return f"{meta['name']}@{file_sha256(folder / DELTA_FILE)[:12]}"
    if (folder / "modules.json").is_file() and (folder / "model.safetensors").is_file():  # a model as published
        return f"{base_name(folder)}@{file_sha256(folder / 'model.safetensors')[:12]}"
    raise FileNotFoundError(f"no relevance embedder in {folder}: run `make model`")


def get_relevance_embedder() -> Embedder:
    """The relevance blend's embedder (``CITESTREAM_RELEVANCE_EMBEDDER``: a folder ``citestream scorer embedder``
    wrote, over the base its metadata names, or a sentence-transformers folder as published, untuned; empty: the
    one the package ships)."""
    return relevance_embedder_at(relevance_embedder_dir())


@lru_cache(maxsize=2)
def relevance_embedder_at(folder: Path) -> Embedder:
    import torch
    from safetensors.torch import load_file

    from ..config import get_settings

    name = _embedder_name(folder)
    settings = get_settings()
    if not (folder / DELTA_FILE).is_file():  # a sentence-transformers folder, zero-shot (stock MiniLM, mpnet)
        return Embedder(batch_size=settings.embedding_batch_size, name=name, base=str(folder),
                        threads=settings.model_threads, **embedding_runtime(settings))
    base = json.loads((folder / METADATA_FILE).read_text()).get("base", MODEL_NAME)
    delta = {k: v.to(torch.float32) for k, v in load_file(str(folder / DELTA_FILE)).items()}
    return Embedder(batch_size=settings.embedding_batch_size, delta=delta, name=name, base=base_path(base),
                    threads=settings.model_threads, **embedding_runtime(settings))
