"""ONNX graphs of loaded models, built once and kept in the state folder under a key of what they are made from.

Why a cache with a key and a digest (issue 54 item 8): a graph is the weights' computation frozen. Its file is named
by the hash of a key that holds the weights' SHA-256 and the versions of the libraries that export and run it, so a
graph of other weights or libraries is never found; a manifest beside it records the graph's own SHA-256, checked on
the bytes that are loaded, so a changed or truncated file is rebuilt, never used. Used by the embedders
(``onnx_embedder``) and the judge (``relevance.onnx_runtime``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

log = logging.getLogger("citestream.onnx")
LIBRARIES = ("torch", "transformers", "onnx", "onnxruntime")
_build_lock = threading.Lock()


def graphs_folder(settings) -> Path:
    """Where every model's ONNX graphs are kept: the judges' and the embedders'."""
    return settings.state_dir / "models" / "onnx"


def weights_digest(model) -> str:
    """SHA-256 of every parameter and buffer of ``model``, by name: what the graph computes with."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(str(tensor.dtype).encode())
        digest.update(str(tuple(tensor.shape)).encode())
        digest.update(tensor.detach().contiguous().cpu().numpy().tobytes())
    return digest.hexdigest()


def library_versions() -> dict[str, str]:
    """The installed versions of what exports, quantises and runs the graph."""
    versions = {}
    for library in LIBRARIES:
        try:
            versions[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[library] = "absent"
    return versions


def _manifest_path(graph: Path) -> Path:
    return graph.with_suffix(".json")


def verified_graph(graph: Path, key: dict) -> bytes | None:
    """The graph's bytes when its manifest names this key and its digest matches them; None otherwise."""
    try:
        manifest = json.loads(_manifest_path(graph).read_text())
        data = graph.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        return None
    if manifest.get("sha256") != hashlib.sha256(data).hexdigest():
        log.warning("the ONNX graph %s does not match its recorded digest; rebuilding it", graph.name)
        return None
    return data


def cached_graph(key: dict, folder: Path, suffix: str, export: Callable[[Path], None]) -> bytes:
    """The verified graph for ``key``: loaded when its manifest and digest match, else made by ``export(path)``
    (which must write the file atomically) and recorded."""
    stem = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    graph = folder / f"{stem}-{suffix}.onnx"
    with _build_lock:
        data = verified_graph(graph, key)
        if data is None:
            graph.parent.mkdir(parents=True, exist_ok=True)
            with warnings.catch_warnings():  # the tracer's notes on shapes it freezes: expected, not news
                warnings.simplefilter("ignore")
                export(graph)
            data = graph.read_bytes()
            manifest = {"key": key, "sha256": hashlib.sha256(data).hexdigest()}
            partial = graph.with_suffix(".json.partial")
            partial.write_text(json.dumps(manifest, indent=1))
            os.replace(partial, _manifest_path(graph))
    return data


def session(data: bytes, threads: int):
    """An ONNX Runtime session on the CPU at ``threads`` intra-op threads (``Settings.model_threads``)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
