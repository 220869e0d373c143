"""The local backend (optional extra `local-llm`): what it asks llama.cpp for, without and with the library.

The first tests stand a fake ``llama_cpp`` in, so they run where llama.cpp is not built (CI).
The last ones need the real library and a GGUF (``make local-llm``) and skip cleanly without them.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import pytest

from citestream.llm import LLMError
from citestream.models import GenerationRecord, LLMExecutionResult
from citestream.core.policy import DEFAULT_POLICY, PROMPT_REFUSAL_LOCK
from citestream.qa.assemble.prompt import render_prompt
from citestream.qa.validate import validate

from tests.support.bundles import make_bundle

BUNDLE = make_bundle()
QUESTION = "What does lecanemab target?"
QWEN = Path(os.environ.get("CITESTREAM_STATE_DIR", ".state")) / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


class FakeLlama:
    made: list[FakeLlama] = []
    reply = {"choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 11, "completion_tokens": 2}}

    def __init__(self, **kwargs):
        self.kwargs, self.calls = kwargs, []
        FakeLlama.made.append(self)

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


@pytest.fixture
def fake_llama(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    monkeypatch.delenv("CITESTREAM_LOCAL_THREADS", raising=False)
    FakeLlama.made = []
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


def test_sends_the_prompt_as_one_user_message_under_the_phase_c_grammar(fake_llama):
    from citestream.llm.local import LocalLlamaBackend, reply_schema

    backend = LocalLlamaBackend(fake_llama)
    prompt = render_prompt(BUNDLE.evidence_block_text, QUESTION)
    reply = backend.complete(prompt)
    (call,) = FakeLlama.made[0].calls
    assert call["messages"] == [{"role": "user", "content": prompt}]  # byte for byte, no system message added
    assert call["temperature"] == 0.0 and call["max_tokens"] == 800
    assert call["response_format"] == {"type": "json_object", "schema": reply_schema(prompt)}
    assert (reply.text, reply.finish_reason, reply.prompt_tokens, reply.completion_tokens) == ("{}", "stop", 11, 2)
    assert backend.model_name == "llama.cpp:m.gguf"
    LocalLlamaBackend(fake_llama, json_mode=False).complete(prompt)
    assert "response_format" not in FakeLlama.made[1].calls[0]


def test_prompt_and_decoding_share_half_the_cores_unless_told(fake_llama, monkeypatch):
    from citestream.llm.local import LocalLlamaBackend

    # llama-cpp-python alone would process the prompt on every core: 4.7x slower on a busy 2-core machine
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    LocalLlamaBackend(fake_llama)
    assert FakeLlama.made[-1].kwargs["n_threads"] == 1 and FakeLlama.made[-1].kwargs["n_threads_batch"] == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    LocalLlamaBackend(fake_llama)
    assert FakeLlama.made[-1].kwargs["n_threads"] == 4 and FakeLlama.made[-1].kwargs["n_threads_batch"] == 4
    assert FakeLlama.made[-1].kwargs["n_ctx"] >= 4096 + 800  # a 3,500-token prompt plus the reply fits
    monkeypatch.setenv("CITESTREAM_LOCAL_THREADS", "2")
    LocalLlamaBackend(fake_llama)
    assert FakeLlama.made[-1].kwargs["n_threads"] == 2 and FakeLlama.made[-1].kwargs["n_threads_batch"] == 2
    LocalLlamaBackend(fake_llama, n_threads=3)
    assert FakeLlama.made[-1].kwargs["n_threads"] == 3
    monkeypatch.setenv("CITESTREAM_LOCAL_THREADS", "all")
    with pytest.raises(LLMError, match="CITESTREAM_LOCAL_THREADS"):
        LocalLlamaBackend(fake_llama)


def test_a_prompt_too_long_for_the_context_is_not_retried(fake_llama, monkeypatch):
    from citestream.llm.local import LocalLlamaBackend

    monkeypatch.setattr(FakeLlama, "reply", ValueError("Requested tokens (9000) exceed context window of 8192"))
    with pytest.raises(LLMError, match="exceed context window"):  # LLMError: generation fails, no retry
        LocalLlamaBackend(fake_llama).complete("x")


def test_without_the_extra_or_a_model_it_says_what_to_install(monkeypatch, tmp_path):
    from citestream.llm.local import LocalLlamaBackend

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails as when the extra is not installed
    with pytest.raises(LLMError, match=r"local-llm"):
        LocalLlamaBackend(tmp_path / "m.gguf")
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=FakeLlama))
    with pytest.raises(LLMError, match="CITESTREAM_LOCAL_MODEL_PATH"):
        LocalLlamaBackend(tmp_path / "missing.gguf")


def test_the_grammar_admits_rows_keyed_by_the_facts_shown_or_the_lock():
    jsonschema = pytest.importorskip("jsonschema")
    from citestream.llm.local import REPLY_SCHEMA, reply_schema

    schema = reply_schema(render_prompt(BUNDLE.evidence_block_text, QUESTION))
    facts = [(e.citation_anchor, e.pdf, e.page, e.chunk_id) for e in BUNDLE.selected_evidence]
    anchor, pdf, page, cid = facts[0]
    row = {"sentence": f"Lecanemab binds protofibrils. [{anchor}]", "pdf": pdf, "page": page, "chunk_id": cid}
    other = facts[1]
    for ok in ({"answer_sentences": [row], "confidence": "High"}, {"answer_sentences": [], "confidence": "Low"},
               {"answer_sentences": [{**row, "sentence": f"Doses (e.g., 0.5 mg) vary [{anchor}]"}],
                "confidence": "Low"},
               PROMPT_REFUSAL_LOCK):
        jsonschema.validate(ok, schema)
    for bad in ({"answer": "x"},
                {"answer_sentences": [{**row, "pdf": f"{pdf}#page={page}"}], "confidence": "High"},  # seen: 0.5B Qwen
                {"answer_sentences": [{**row, "page": str(page)}], "confidence": "High"},
                {"answer_sentences": [{**row, "chunk_id": other[3]}], "confidence": "High"},  # another fact's id
                {"answer_sentences": [{**row, "sentence": f"Binds. [{other[0]}]"}], "confidence": "High"},
                {"answer_sentences": [{**row, "sentence": "Binds protofibrils."}], "confidence": "High"},
                {"answer_sentences": [{**row, "sentence": f'Says "x". [{anchor}]'}], "confidence": "High"},
                # seen: the 0.5B Qwen wrote the answer, then ran on in the same row to the token limit
                {"answer_sentences": [{**row, "sentence": f"FDA has 60 days. If it files, it reviews. [{anchor}]"}],
                 "confidence": "High"},
                {"answer_sentences": [row] * 7, "confidence": "High"},
                {"answer_sentences": [{**row, "note": "x"}], "confidence": "High"},
                {"answer_sentences": [row], "confidence": "high"}, "Not found in provided PDFs"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    assert reply_schema("no evidence headers here") == REPLY_SCHEMA


# --- with llama.cpp built (make local-llm); CI skips these --------------------------------------------------


def test_llama_cpp_compiles_the_grammar():
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    from citestream.llm.local import REPLY_SCHEMA, reply_schema

    for schema in (REPLY_SCHEMA, reply_schema(render_prompt(BUNDLE.evidence_block_text, QUESTION))):
        assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "qwen0.5b"])
def test_a_real_model_replies_in_the_contract_and_r5_judges_it(model):
    pytest.importorskip("llama_cpp")
    from citestream.llm.local import LocalLlamaBackend, default_model_path

    path = default_model_path() if model == "smollm2" else (QWEN if QWEN.is_file() else None)
    if path is None:
        pytest.skip(f"no GGUF for {model}: make local-llm")
    backend = LocalLlamaBackend(path, max_tokens=300)
    reply = backend.complete(render_prompt(BUNDLE.evidence_block_text, QUESTION))
    assert reply.prompt_tokens and reply.finish_reason in ("stop", "length")
    if reply.finish_reason == "stop":  # the grammar held: the lock as a JSON string, or the Phase C object
        body = json.loads(reply.text)
        assert body == PROMPT_REFUSAL_LOCK or set(body) == {"answer_sentences", "confidence"}
    record = GenerationRecord(
        request_id="l-1", policy_version="p", question=QUESTION, scope="MIXED",
        generation_status="OK", answer_bundle=BUNDLE, prompt_sha256="ab" * 32,
        llm=LLMExecutionResult(request_id="l-1", model_name=backend.model_name, prompt_sha256="ab" * 32,
                               generation_status="OK", raw_model_text=reply.text, finish_reason=reply.finish_reason,
                               attempts=1, llm_latency_ms=1.0))
    answer = validate(record, DEFAULT_POLICY)  # a weak model: answered and grounded, or refused with a reason
    assert answer.validation_status == "PASSED" or answer.failure_reason
    assert not (answer.failure_reason or "").startswith("MALFORMED_JSON")
