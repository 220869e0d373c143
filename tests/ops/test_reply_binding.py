"""Issue 54 item 1: a reply is bound to its request. The seal covers a record's body, not its Kafka key, so a
validly sealed answer of another request, moved under this request's key, verifies; ``citestream ask`` and
``eval`` take it only if its body names the request id, question and scope they sent.

On the real broker, with a stand-in worker of the test's own (a key pair in tmp_path, its public half given to the
client as the worker's): it answers each question it reads first with a sealed answer of another request under
the question's key, then (when told) with the genuine one.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import uuid
from collections.abc import Callable

import pytest

from citestream.eval.run import run_kafka
from citestream.eval.sets import GoldenItem
from citestream.models import QuestionEvent, ValidatedAnswer
from citestream.ops.client import ReplyReader, _tail_consumer, publish_and_collect, unbound_fields
from citestream.sealing import RecordSealer
from citestream.topics import create_topics

OTHER = QuestionEvent(request_id="earlier-run-1", question="What does lecanemab target?", scope="EMA")
REPLAYED_TEXT = "An earlier run's answer to another question."


def _answer(question: QuestionEvent, text: str) -> ValidatedAnswer:
    return ValidatedAnswer(request_id=question.request_id, policy_version="p", question=question.question,
                           scope=question.scope, status="answered", answer_text=text, classification="DEFINITIVE",
                           generation_status="OK", validation_status="PASSED")


def test_a_reply_is_bound_by_request_id_question_and_scope():
    asked = QuestionEvent(request_id="r-1", question="How long does FDA take to file an NDA?", scope="FDA")
    assert unbound_fields(asked, _answer(asked, "x")) == []
    assert unbound_fields(asked, _answer(OTHER, "x")) == ["request_id", "question", "scope"]
    same_id = QuestionEvent(request_id="r-1", question=OTHER.question, scope="FDA")
    assert unbound_fields(asked, _answer(same_id, "x")) == ["question"]  # a reused id with another question


@pytest.fixture()
def stand_in(settings, tmp_path):
    """Settings on topics of their own whose worker key is the test's, and the sealer holding that key."""
    sealer = RecordSealer(secrets.token_bytes(32))
    sealer.publish(tmp_path / "records.pub")
    prefix = f"bind-{uuid.uuid4().hex[:8]}."
    s = settings.model_copy(update={"topic_prefix": prefix, "record_public_key_file": tmp_path / "records.pub"})
    create_topics(s.bootstrap_servers, s.topic_prefix)
    return s, sealer


Replies = Callable[[QuestionEvent, bytes], list[tuple[bytes, ValidatedAnswer]]]
"""What the stand-in worker sends for a question read under a key: (key, answer to seal) pairs, in order."""


def _replayed(question: QuestionEvent, key: bytes) -> list[tuple[bytes, ValidatedAnswer]]:
    return [(key, _answer(OTHER, REPLAYED_TEXT))]


def _replayed_then_genuine(question: QuestionEvent, key: bytes) -> list[tuple[bytes, ValidatedAnswer]]:
    return _replayed(question, key) + [(key, _answer(question, "genuine"))]


def _replaying_worker(settings, sealer: RecordSealer, replies: Replies, ready: threading.Event,
                      stop: threading.Event):
    """Reads ``questions``; sends what ``replies`` says for each, sealed."""
    from aiokafka import AIOKafkaProducer

    async def run() -> None:
        consumer = await _tail_consumer(settings, "questions")
        producer = AIOKafkaProducer(bootstrap_servers=settings.bootstrap_servers, acks="all")
        await producer.start()
        ready.set()
        try:
            while not stop.is_set():
                for messages in (await consumer.getmany(timeout_ms=200)).values():
                    for message in messages:
                        question = QuestionEvent.model_validate_json(message.value)
                        for key, reply in replies(question, message.key):
                            await producer.send_and_wait(settings.topic("answers"), sealer.payload(reply), key=key)
        finally:
            await producer.stop()
            await consumer.stop()

    asyncio.run(run())


def _with_stand_in(settings, sealer, replies: Replies, client):
    ready, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=_replaying_worker, args=(settings, sealer, replies, ready, stop))
    thread.start()
    try:
        assert ready.wait(60), "the stand-in worker did not start"
        return client()
    finally:
        stop.set()
        thread.join(30)


def test_ask_passes_over_a_sealed_answer_of_another_request_replayed_under_its_key(stand_in):
    settings, sealer = stand_in
    asked = QuestionEvent(request_id=f"ask-{uuid.uuid4().hex[:8]}", question="How long does FDA take to file?",
                          scope="FDA")
    reader = ReplyReader(settings, "answers")
    replies, _ = _with_stand_in(settings, sealer, _replayed_then_genuine, lambda: asyncio.run(publish_and_collect(
        [asked], timeout_s=30, settings=settings, reader=reader)))
    assert replies[asked.request_id].answer_text == "genuine"
    assert (reader.refused, reader.unbound) == (0, 1)  # the replay's fate is counted, not silent


def test_eval_scores_no_replayed_answer_and_says_so(stand_in, capsys):
    settings, sealer = stand_in
    item = GoldenItem(id="q1", question="How long does FDA take to file an NDA?", answerable=True, scope="FDA",
                      category="number")
    reader = ReplyReader(settings, "answers")
    replies = _with_stand_in(settings, sealer, _replayed, lambda: run_kafka([item], 8.0, settings, reader=reader))
    assert replies == {}, "an answer of another request was scored for this item"
    assert reader.unbound == 1
    assert "1 sealed answers of other requests" in capsys.readouterr().err


def _under_a_key_that_is_not_utf8(question: QuestionEvent, key: bytes) -> list[tuple[bytes, ValidatedAnswer]]:
    return [(b"\xff" + key, _answer(question, "under a broken key")), (key, _answer(question, "genuine"))]


def test_ask_passes_over_an_answer_whose_key_is_not_utf8(stand_in):
    """Issue 54 L1: a record on `answers` under a key that is not UTF-8 names none of the requests sent (their
    keys are their UTF-8 ids), so ``ask`` and ``eval`` pass it over as another request's and go on reading."""
    settings, sealer = stand_in
    asked = QuestionEvent(request_id=f"ask-{uuid.uuid4().hex[:8]}", question="How long does FDA take to file?",
                          scope="FDA")
    reader = ReplyReader(settings, "answers")
    replies, _ = _with_stand_in(settings, sealer, _under_a_key_that_is_not_utf8, lambda: asyncio.run(
        publish_and_collect([asked], timeout_s=30, settings=settings, reader=reader)))
    assert replies[asked.request_id].answer_text == "genuine"
    assert (reader.refused, reader.unbound) == (0, 0)  # never read: like any other request's answer
