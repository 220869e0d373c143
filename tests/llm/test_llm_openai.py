"""The `openai` backend and the R3 wrapper against a local server speaking the chat-completions API.

The hosted LLM is the one thing faked: ``FakeOpenAI`` (tests/support/fake_openai.py) replays
each test's scripted replies, answers with the refusal lock once the script runs
out, and records every request it gets.
"""

from __future__ import annotations

import json
import logging

import pytest

from citestream.core.hashing import sha256_hex
from citestream.llm.execution import execute
from citestream.llm import LLMError, OpenAIBackend, TransientLLMError
from citestream.models import GenerationRecord, REFUSAL_TEXT
from citestream.core.policy import DEFAULT_POLICY, PROMPT_REFUSAL_LOCK
from citestream.qa.assemble.prompt import render_prompt
from citestream.qa.validate import validate

from tests.support.fake_openai import FakeOpenAI, Reply


@pytest.fixture(scope="module")
def _fake_server():
    with FakeOpenAI(responder=lambda body: Reply(PROMPT_REFUSAL_LOCK)) as server:
        yield server


@pytest.fixture()
def fake(_fake_server):
    _fake_server.reset()
    return _fake_server


def _bundle_and_prompt(question: str = "How much do DOACs reduce stroke risk?"):
    from tests.support.bundles import make_bundle

    bundle = make_bundle()
    prompt = render_prompt(bundle.evidence_block_text, question)
    return bundle, prompt


def _no_sleep(waits: list[float]):
    return waits.append


# ---------------------------------------------------------------- the request


def test_request_is_the_exact_prompt_in_json_mode(fake):
    _, prompt = _bundle_and_prompt()
    backend = OpenAIBackend(fake.base_url, "qwen2.5-1.5b-instruct", api_key="sk-test", timeout_s=5)
    fake.script.append(Reply('{"answer_sentences": [], "confidence": "Low"}'))
    reply = backend.complete(prompt)
    _raw, body, headers = fake.requests[0]
    assert body["messages"] == [{"role": "user", "content": prompt}]  # one message, no added instructions
    assert body["messages"][0]["content"].encode("utf-8") == prompt.encode("utf-8")
    assert body["model"] == "qwen2.5-1.5b-instruct" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert headers["Authorization"] == "Bearer sk-test"
    assert reply.text == '{"answer_sentences": [], "confidence": "Low"}' and reply.finish_reason == "stop"
    assert reply.prompt_tokens == len(prompt) // 4 and reply.completion_tokens is not None


def test_json_mode_can_be_switched_off_for_servers_without_it(fake):
    OpenAIBackend(fake.base_url, "m", json_mode=False, timeout_s=5).complete("p")
    assert "response_format" not in fake.requests[0][1]
    assert "Authorization" not in fake.requests[0][2]


# ---------------------------------------------------------------- R3: retries, telemetry


def test_429_and_5xx_are_retried_with_the_same_bytes_and_model(fake):
    _, prompt = _bundle_and_prompt()
    fake.script.extend([Reply(status=429, raw_body=b"{}", headers={"Retry-After": "0.2"}),
                        Reply(status=503, raw_body=b"busy"), Reply(status=500, raw_body=b"oops"),
                        Reply('{"answer_sentences": [], "confidence": "Low"}')])
    waits: list[float] = []
    result = execute(OpenAIBackend(fake.base_url, "model-a", timeout_s=5), "r-retry", prompt, sha256_hex(prompt),
                     max_attempts=4, backoff_s=0.01, sleep=_no_sleep(waits))
    assert result.generation_status == "OK" and result.attempts == 4
    assert result.model_name == "model-a" and result.prompt_sha256 == sha256_hex(prompt)
    assert len({raw for raw, _, _ in fake.requests}) == 1  # byte-identical requests
    assert {body["model"] for _, body, _ in fake.requests} == {"model-a"}
    assert waits == [0.2, 0.02, 0.04]  # Retry-After honoured, then exponential backoff


def test_transient_failures_exhaust_attempts_then_fail(fake):
    fake.script.extend([Reply(status=502, raw_body=b"")] * 3)
    result = execute(OpenAIBackend(fake.base_url, "m", timeout_s=5), "r-x", "p", sha256_hex("p"),
                     max_attempts=3, sleep=_no_sleep([]))
    assert result.generation_status == "FAILED" and result.attempts == 3
    assert result.error == "transient: HTTP 502" and result.raw_model_text == ""


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_4xx_is_not_retried(fake, status):
    fake.script.append(Reply(status=status, raw_body=b'{"error": {"message": "bad request"}}'))
    result = execute(OpenAIBackend(fake.base_url, "m", timeout_s=5), "r-4xx", "p", sha256_hex("p"),
                     sleep=_no_sleep([]))
    assert result.generation_status == "FAILED" and result.attempts == 1 and len(fake.requests) == 1
    assert result.error.startswith(f"permanent: HTTP {status}")


def test_timeout_is_transient_and_retried(fake):
    fake.script.extend([Reply("late", delay_s=1.5), Reply('{"answer_sentences": [], "confidence": "Low"}')])
    backend = OpenAIBackend(fake.base_url, "m", timeout_s=0.5)
    with pytest.raises(TransientLLMError):
        backend.complete("p")
    result = execute(backend, "r-t", "p", sha256_hex("p"), sleep=_no_sleep([]))
    assert result.generation_status == "OK" and result.attempts == 1  # the script's second reply
    fake.script.extend([Reply("late", delay_s=1.5), Reply("ok")])
    result = execute(backend, "r-t2", "p", sha256_hex("p"), sleep=_no_sleep([]))
    assert result.attempts == 2 and result.raw_model_text == "ok"


def test_a_reply_that_is_not_a_chat_completion_is_permanent(fake):
    fake.script.append(Reply(raw_body=b"<html>proxy error</html>"))
    with pytest.raises(LLMError):
        OpenAIBackend(fake.base_url, "m", timeout_s=5).complete("p")
    fake.script.append(Reply(raw_body=json.dumps({"choices": []}).encode()))
    result = execute(OpenAIBackend(fake.base_url, "m", timeout_s=5), "r-n", "p", sha256_hex("p"))
    assert result.generation_status == "FAILED" and result.attempts == 1


def test_unreachable_server_is_transient():
    backend = OpenAIBackend("http://127.0.0.1:9/v1", "m", timeout_s=1)
    result = execute(backend, "r-u", "p", sha256_hex("p"), max_attempts=2, sleep=_no_sleep([]))
    assert result.generation_status == "FAILED" and result.attempts == 2 and result.error.startswith("transient")


def test_prompt_bytes_must_match_their_hash(fake):
    with pytest.raises(ValueError, match="prompt_sha256"):
        execute(OpenAIBackend(fake.base_url, "m"), "r", "prompt", sha256_hex("other prompt"))
    assert not fake.requests


def test_telemetry_fields_and_logs_carry_hashes_and_counts_never_text(fake, caplog):
    _, prompt = _bundle_and_prompt()
    content = json.dumps({"answer_sentences": [{"sentence": "Secret reply sentence [C0].", "pdf": "doac.pdf",
                                                "page": 3, "chunk_id": "doac-p3-c0"}], "confidence": "High"})
    fake.script.extend([Reply(status=503, raw_body=b""), Reply(content, finish_reason="stop")])
    with caplog.at_level(logging.DEBUG):
        result = execute(OpenAIBackend(fake.base_url, "model-b", timeout_s=5), "r-tel", prompt, sha256_hex(prompt),
                         sleep=_no_sleep([]))
    assert result.model_dump().keys() >= {
        "request_id", "model_name", "prompt_sha256", "generation_status", "raw_model_text", "finish_reason",
        "attempts", "llm_latency_ms", "prompt_tokens_actual", "completion_tokens_actual", "total_tokens_actual"}
    assert (result.request_id, result.model_name, result.generation_status, result.finish_reason,
            result.attempts) == ("r-tel", "model-b", "OK", "stop", 2)
    assert result.raw_model_text == content  # untouched
    assert result.prompt_tokens_actual == len(prompt) // 4
    assert result.total_tokens_actual == result.prompt_tokens_actual + result.completion_tokens_actual
    assert result.llm_latency_ms > 0
    logs = "\n".join(r.getMessage() for r in caplog.records)
    assert sha256_hex(prompt) in logs and sha256_hex(content) in logs and "attempts=2" in logs
    assert "tokens=" in logs
    for secret in ("Direct oral anticoagulants", "SYSTEM INSTRUCTIONS", "How much do DOACs", "Secret reply"):
        assert secret not in logs


# ---------------------------------------------------------------- scripted model replies through validation


def _validated(fake, content: str, question: str = "How much do DOACs reduce stroke risk?"):
    bundle, prompt = _bundle_and_prompt(question)
    fake.script.append(Reply(content))
    result = execute(OpenAIBackend(fake.base_url, "m", timeout_s=5), "r-v", prompt, sha256_hex(prompt))
    record = GenerationRecord(request_id="r-v", policy_version="p", question=question, scope="MIXED",
                              generation_status=result.generation_status, answer_bundle=bundle,
                              prompt_sha256=result.prompt_sha256, llm=result)
    return validate(record, DEFAULT_POLICY)


GOOD = {"sentence": "DOACs such as apixaban reduce stroke risk in atrial fibrillation patients by approximately "
                    "70% [C0].", "pdf": "doac.pdf", "page": 3, "chunk_id": "doac-p3-c0"}


@pytest.mark.parametrize("content,code", [
    ('{"answer_sentences": [{"sentence": "DOACs reduce', "MALFORMED_JSON"),
    ("Sure! Here is the JSON you asked for.", "MALFORMED_JSON"),
    (json.dumps({"answer_sentences": [{**GOOD, "chunk_id": "doac-p3-c9"}], "confidence": "High"}),
     "NO_VALID_SENTENCE"),
    (json.dumps({"answer_sentences": [{**GOOD, "sentence": GOOD["sentence"].replace(" [C0]", "")}]}),
     "UNCITED_SENTENCE"),
    (json.dumps({"answer_sentences": [{**GOOD, "sentence": GOOD["sentence"].replace("[C0]", "[C99]")}]}),
     "UNKNOWN_ANCHOR"),
    (REFUSAL_TEXT, "REFUSAL_NOT_EXACT"),
])
def test_scripted_bad_replies_become_the_refusal(fake, content, code):
    answer = _validated(fake, content)
    assert answer.answer_text == REFUSAL_TEXT and answer.validation_status == "FAILED"
    assert answer.failure_reason.startswith(code)


def test_scripted_refusal_lock_and_good_answer(fake):
    refused = _validated(fake, PROMPT_REFUSAL_LOCK)
    assert refused.answer_text == REFUSAL_TEXT and refused.validation_status == "PASSED"
    answered = _validated(fake, json.dumps({"answer_sentences": [GOOD], "confidence": "High"}))
    assert answered.status == "answered" and answered.answer_text.startswith("ANSWER:\n1. DOACs")
    assert answered.answer_text.endswith("(doac.pdf, p3, doac-p3-c0)\nCONFIDENCE: High")
