"""End to end through Kafka with the `openai` backend: a real worker process talking to a local fake model.

The worker runs on its own topic prefix and consumer group so it never takes
work meant for the session's default (extractive) worker. The fake model
answers per question: the extractive backend's reply (a well-behaved model),
a fake anchor, an invented number, or a 503 before a good reply.
"""

from __future__ import annotations

import json

import pytest

from citestream.ops.client import ask_many
from citestream.core.hashing import sha256_hex
from citestream.llm import ExtractiveBackend
from citestream.llm.extractive import parse_prompt
from citestream.models import QuestionEvent, REFUSAL_TEXT
from citestream.ops.replay import replay
from citestream.store import Ledger

from tests.support.common import new_request_id, own_topics_worker
from tests.support.fake_openai import FakeOpenAI, Reply

pytestmark = pytest.mark.e2e

Q_GOOD = "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"
Q_FAKE_ANCHOR = "What complete remission rates has CD19 CAR-T cell therapy achieved in ALL?"
Q_INVENTED_NUMBER = "How durable are CAR-T responses in ALL patients at 12 months?"
Q_RETRIED = "By how much did lecanemab slow cognitive decline in early Alzheimer's disease?"


def scripted_model(body: dict) -> Reply:
    prompt = body["messages"][0]["content"]
    blocks, question = parse_prompt(prompt)
    good = ExtractiveBackend().complete(prompt).text
    if question == Q_FAKE_ANCHOR:
        b = blocks[0]
        return Reply(json.dumps({"answer_sentences": [{"sentence": f"{b.text.split('. ')[0]}. [C99]", "pdf": b.pdf,
                                                       "page": b.page, "chunk_id": b.chunk_id}],
                                 "confidence": "High"}))
    if question == Q_INVENTED_NUMBER:
        b = next(b for b in blocks if "CAR-T" in b.text)
        return Reply(json.dumps({"answer_sentences": [{
            "sentence": f"Long-term follow-up shows durable responses in approximately 95% of patients at 12 months "
                        f"[{b.anchor}].", "pdf": b.pdf, "page": b.page, "chunk_id": b.chunk_id}],
            "confidence": "High"}))
    return Reply(good, finish_reason="stop")


@pytest.fixture(scope="module")
def openai_stack(settings, topics, database, smoke_ingested, tmp_path_factory):
    with FakeOpenAI(responder=scripted_model) as fake, own_topics_worker(
            settings, "oai", tmp_path_factory.mktemp("oai-worker") / "worker.log", {
                "CITESTREAM_LLM_BACKEND": "openai", "CITESTREAM_OPENAI_BASE_URL": fake.base_url,
                "CITESTREAM_OPENAI_MODEL": "fake-chat-model", "CITESTREAM_OPENAI_API_KEY": "sk-local-test",
            }) as (worker, stack_settings):
        yield fake, worker, stack_settings


def test_openai_backend_through_kafka(openai_stack, engine):
    fake, worker, stack_settings = openai_stack
    fake.script.append(Reply(status=503, raw_body=b'{"error": "overloaded"}'))  # the first call fails, transiently
    questions = {q: QuestionEvent(request_id=new_request_id("oai"), question=q)
                 for q in (Q_RETRIED, Q_GOOD, Q_FAKE_ANCHOR, Q_INVENTED_NUMBER)}
    replies = {}
    for q, event in questions.items():  # one at a time, so the scripted 503 meets the first question
        got, _ = ask_many([event], timeout_s=120, settings=stack_settings)
        assert event.request_id in got, worker.log_path.read_text()[-3000:]
        replies[q] = got[event.request_id]

    good = replies[Q_GOOD]
    assert good.status == "answered" and good.validation_status == "PASSED", good.failure_reason
    assert "70%" in good.answer_text and good.answer_text.startswith("ANSWER:\n1. ")
    assert good.answer_text.splitlines()[-1].startswith("CONFIDENCE: ")
    assert [t.stage for t in good.trace][-2:] == ["generate", "validate"]

    retried = replies[Q_RETRIED]
    assert retried.status == "answered", retried.failure_reason
    assert "27% reduction in cognitive decline" in retried.answer_text

    for q, code in ((Q_FAKE_ANCHOR, "UNKNOWN_ANCHOR"), (Q_INVENTED_NUMBER, "UNGROUNDED_SENTENCE")):
        answer = replies[q]
        assert answer.answer_text == REFUSAL_TEXT and answer.classification == "REFUSAL"
        assert answer.validation_status == "FAILED" and answer.failure_reason.startswith(code), answer.failure_reason

    # Every model call got the exact prompt the ledger recorded, with the configured model and key.
    ledger = Ledger(engine)
    sent = {sha256_hex(body["messages"][0]["content"]) for _, body, _ in fake.requests}
    assert {body["model"] for _, body, _ in fake.requests} == {"fake-chat-model"}
    assert {h["Authorization"] for _, _, h in fake.requests} == {"Bearer sk-local-test"}
    for event in questions.values():
        rows = ledger.entries_for(event.request_id)
        assert len(rows) == 1 and rows[0]["model"] == "fake-chat-model"
        assert rows[0]["prompt_sha256"] in sent
        assert [r.ok for r in replay(ledger, event.request_id)] == [True]
    retried_row = ledger.entries_for(questions[Q_RETRIED].request_id)[0]
    assert retried_row["payload"]["attempts"] == 2
    retried_requests = [raw for raw, body, _ in fake.requests
                        if sha256_hex(body["messages"][0]["content"]) == retried_row["prompt_sha256"]]
    assert len(retried_requests) == 2 and len(set(retried_requests)) == 1  # same bytes both times
    assert "Direct oral anticoagulants" not in worker.log_path.read_text()  # no prompt text in the logs
