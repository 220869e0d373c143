"""Phase B in LLM mode through Kafka: a real worker whose filter asks a local fake OpenAI-compatible model.

A reply that breaks the Phase B contract is dead-lettered (LLM_REPLY_INVALID,
the model's raw reply as payload) while the question goes on with the local
filter and is still answered; a valid reply is used (filter_mode llm). The
worker has its own topic prefix and consumer group.
"""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from citestream.ops.client import ask_many, read_topic
from citestream.llm import ExtractiveBackend
from citestream.models import QuestionEvent

from tests.support.common import new_request_id, own_topics_worker
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

Q_INVALID = "By how much did lecanemab slow cognitive decline in early Alzheimer's disease?"
Q_VALID = "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"
BAD_REPLY = "Sure! The relevant facts are the first two."


def model(body: dict) -> Reply:
    prompt = body["messages"][0]["content"]
    if "### FACTS\n" not in prompt:  # the answer prompt (PROMPT_V1): answer like a well-behaved model
        return Reply(ExtractiveBackend().complete(prompt).text)
    if Q_INVALID in prompt:
        return Reply(BAD_REPLY)
    facts = [json.loads(line) for line in prompt.split("### FACTS\n", 1)[1].split("\n### END FACTS", 1)[0].split("\n")]
    chosen = [f for f in facts if "apixaban" in f["quote"].lower()]
    return Reply(json.dumps({"relevant_facts": chosen + [{"pdf": "x.pdf", "page": 1, "chunk_id": "invented"}]}))


@pytest.fixture(scope="module")
def llm_filter_stack(settings, topics, database, smoke_ingested, tmp_path_factory):
    with FakeOpenAI(responder=model) as fake, own_topics_worker(
            settings, "llmfilter", tmp_path_factory.mktemp("llm-filter-worker") / "worker.log", {
                "CITESTREAM_FILTER_MODE": "llm", "CITESTREAM_LLM_BACKEND": "openai",
                "CITESTREAM_OPENAI_BASE_URL": fake.base_url, "CITESTREAM_OPENAI_MODEL": "fake-filter-model",
            }) as stack:
        yield stack


def _by_key(topic: str, stack_settings, request_ids: set[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {rid: [] for rid in request_ids}
    for message in asyncio.run(read_topic(topic, settings=stack_settings)):
        rid = message.key.decode() if message.key else None
        if rid in out:
            out[rid].append(json.loads(message.value))
    return out


def test_invalid_llm_filter_reply_is_dead_lettered_and_the_question_falls_back(llm_filter_stack):
    worker, stack_settings = llm_filter_stack
    invalid = QuestionEvent(request_id=new_request_id("llmf"), question=Q_INVALID)
    valid = QuestionEvent(request_id=new_request_id("llmf"), question=Q_VALID)
    replies, _ = ask_many([invalid, valid], timeout_s=150, settings=stack_settings)
    assert set(replies) == {invalid.request_id, valid.request_id}, worker.log_path.read_text()[-3000:]
    assert replies[invalid.request_id].status == "answered", replies[invalid.request_id].failure_reason
    assert "27% reduction in cognitive decline" in replies[invalid.request_id].answer_text
    assert replies[valid.request_id].status == "answered" and "70%" in replies[valid.request_id].answer_text

    ids = {invalid.request_id, valid.request_id}
    relevant = _by_key("qa.relevant", stack_settings, ids)
    fell_back, used = relevant[invalid.request_id][0], relevant[valid.request_id][0]
    assert fell_back["filter_mode"] == "local" and fell_back["filter_fallback_reason"].startswith("LLM_REPLY_INVALID")
    assert fell_back["facts"]
    assert used["filter_mode"] == "llm" and used["filter_fallback_reason"] is None and used["llm_rows_rejected"] == 1
    assert used["facts"] and all("apixaban" in f["quote"].lower() for f in used["facts"])

    letters = _by_key("qa.deadletter", stack_settings, ids)
    assert letters[valid.request_id] == []
    [letter] = letters[invalid.request_id]
    assert letter["reason_code"] == "LLM_REPLY_INVALID" and letter["stage"] == "filter"
    assert letter["source_topic"] == "qa.facts" and "not JSON" in letter["reason"]
    assert base64.b64decode(letter["original_value_b64"]).decode() == BAD_REPLY
