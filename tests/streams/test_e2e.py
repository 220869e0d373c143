"""End to end through the real broker and a worker process: questions in, cited answers (or refusals) out."""

import asyncio
import base64
import json
import time

import pytest

from citestream.ops.client import ask_many, publish_and_collect, read_topic
from citestream.models import QuestionEvent, REFUSAL_TEXT
from citestream.store import ChunkStore, Ledger, RequestTracker

from tests.support.common import new_request_id

pytestmark = pytest.mark.e2e


def _outcome(engine, request_id: str, timeout_s: float = 10.0) -> str | None:
    """The request's outcome; the tracker is written just after the answer is sent, so allow a moment."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        row = RequestTracker(engine).get(request_id)
        if row and row["outcome"]:
            return row["outcome"]
        time.sleep(0.1)
    return None


def _ask(question: str, **kw) -> QuestionEvent:
    return QuestionEvent(request_id=new_request_id("e2e"), question=question, **kw)


def test_answers_cite_ingested_chunks(worker, engine):
    questions = [
        _ask("By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"),
        _ask("What complete remission rates has CD19 CAR-T cell therapy achieved in ALL?"),
    ]
    replies, _ = ask_many(questions, timeout_s=90)
    store = ChunkStore(engine)
    known = set(store.chunk_ids("smoke-001")) | set(store.chunk_ids("smoke-002"))
    for q in questions:
        answer = replies[q.request_id]
        assert answer.status == "answered" and answer.validation_status == "PASSED"
        assert answer.answer_text.startswith("ANSWER:\n1. ")
        assert answer.answer_text.splitlines()[-1] in {"CONFIDENCE: High", "CONFIDENCE: Medium", "CONFIDENCE: Low"}
        assert answer.sentences and {s.chunk_id for s in answer.sentences} <= known
        for s in answer.sentences:
            assert f"({s.pdf}, p{s.page}, {s.chunk_id})" in answer.answer_text
        assert [t.stage for t in answer.trace] == ["retrieve", "filter", "assemble", "generate", "validate"]
        assert _outcome(engine, q.request_id) == "answered"
        assert len(Ledger(engine).entries_for(q.request_id)) == 1
    assert "70%" in replies[questions[0].request_id].answer_text
    assert "80%" in replies[questions[1].request_id].answer_text


def test_questions_published_together_are_answered_once_each_as_if_alone(worker, engine, settings):
    """The retrieve agent takes questions in groups and runs them side by side (their model passes batched): each
    still gets its one answer, its one ledger row, and the answer the stage functions give it alone in-process."""
    from citestream.deps import Deps
    from citestream.inprocess import answer_inprocess

    asked = ["By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?",
             "What complete remission rates has CD19 CAR-T cell therapy achieved in ALL?",
             "By how much did lecanemab slow cognitive decline?",
             "What does lecanemab target in early Alzheimer's disease?",
             "Who won the 1998 football world cup?",
             "What is the boiling point of liquid nitrogen at sea level?"]
    questions = [_ask(q) for q in asked]
    replies, _ = ask_many(questions, timeout_s=120)
    deps = Deps(settings)
    for q in questions:
        answer = replies[q.request_id]
        alone = answer_inprocess(q.model_copy(update={"request_id": new_request_id("alone")}), deps)
        assert (answer.status, answer.answer_text) == (alone.status, alone.answer_text), q.question
        assert [t.stage for t in answer.trace] == ["retrieve", "filter", "assemble", "generate", "validate"]
        assert _outcome(engine, q.request_id) == answer.status
        ledger = Ledger(engine)
        assert len(ledger.entries_for(q.request_id)) == len(ledger.entries_for(alone.request_id)) <= 1
    assert sum(replies[q.request_id].status == "answered" for q in questions) >= 4


def test_unanswerable_question_gets_the_exact_refusal(worker, engine):
    q = _ask("What is the boiling point of liquid nitrogen at sea level?")
    replies, _ = ask_many([q], timeout_s=90)
    answer = replies[q.request_id]
    assert answer.answer_text == REFUSAL_TEXT
    assert answer.status == "refused" and answer.classification == "REFUSAL"
    assert _outcome(engine, q.request_id) == "refused"


def test_bad_records_are_dead_lettered_and_the_worker_keeps_answering(worker, settings):
    before = asyncio.run(_end_offsets(settings))
    malformed = b'{"request_id": "broken-json", "question": '
    wrong_schema = json.dumps({"request_id": "wrong-schema-1", "question": "ok", "colour": "blue"}).encode()
    not_utf8 = b"\xff\xfe\x00question"
    good = _ask("What does lecanemab target in early Alzheimer's disease?")
    replies, _ = asyncio.run(publish_and_collect(
        [good], raw=[(b"broken-json", malformed), (b"wrong-schema-1", wrong_schema), (None, not_utf8)],
        timeout_s=90))
    assert replies[good.request_id].status == "answered"

    letters = [json.loads(m.value) for m in asyncio.run(read_topic("qa.deadletter", since=before, settings=settings))]
    by_value = {base64.b64decode(d["original_value_b64"]): d for d in letters}
    assert by_value[malformed]["reason_code"] == "DECODE_ERROR"
    assert by_value[malformed]["request_id"] == "broken-json"
    assert by_value[wrong_schema]["reason_code"] == "SCHEMA_VIOLATION"
    assert "colour" in by_value[wrong_schema]["reason"]
    assert by_value[not_utf8]["reason_code"] == "DECODE_ERROR"
    assert by_value[not_utf8]["request_id"].startswith("unknown-")
    assert all(d["stage"] == "retrieve" and d["source_topic"] == "questions" for d in by_value.values())


async def _end_offsets(settings):
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=settings.bootstrap_servers)
    await consumer.start()
    try:
        tps = [TopicPartition(settings.topic("qa.deadletter"), 0)]
        return {tp.partition: off for tp, off in (await consumer.end_offsets(tps)).items()}
    finally:
        await consumer.stop()
