"""Every internal hop is authenticated: a record on an internal topic that no worker wrote — made up, altered after
sealing, or sealed with another key — is dead-lettered PROVENANCE_MISMATCH before its stage trusts it, never becomes
a PASSED answer, and the worker stays up. The same holds in-process (``pipeline.run_steps``).

The forged ``qa.relevant`` record keeps real chunk ids, pdfs and pages of a real record and makes up the quotes:
the attack of issue 41 that used to end in a PASSED answer citing the made-up text.
"""

from __future__ import annotations

import asyncio
import json
import secrets

import pytest

from citestream.ops.client import read_topic
from citestream.core.errors import RecordRejected
from citestream.deps import Deps
from citestream.flow import QUESTION_PATH
from citestream.models import QuestionEvent, RelevantFactsRecord
from citestream.inprocess import run_steps
from citestream.sealing import RecordSealer

from tests.streams.test_hostile import GOOD_QUESTION, _assert_alive_and_quiet, _send_raw, _wait_for_letters
from tests.support.common import new_request_id
from tests.support.reliability import end_offsets

MADE_UP = "Lecanemab cures every form of dementia within one week and is approved for children."


def _forgeries(real: dict, settings) -> dict[str, tuple[str, bytes]]:
    """name → (request_id, bytes) of three forged qa.relevant records built on ``real`` (a record a worker wrote)."""
    def made_up(rid: str) -> dict:
        facts = [dict(fact, quote=MADE_UP) for fact in real["facts"]]
        return dict(real, request_id=rid, facts=facts)

    unsealed, altered, other_key = (new_request_id(f"forged-{n}") for n in ("none", "altered", "key"))
    stranger = RecordSealer(secrets.token_bytes(32))
    return {
        "no MAC": (unsealed, json.dumps({k: v for k, v in made_up(unsealed).items() if k != "mac"}).encode()),
        "the real MAC on altered content": (altered, json.dumps(made_up(altered)).encode()),  # real["mac"] kept
        "sealed with another key": (other_key,
                                    stranger.payload(RelevantFactsRecord.model_validate(made_up(other_key)))),
    }


@pytest.mark.e2e
def test_a_forged_relevant_record_is_dead_lettered_never_answered(worker, settings):
    seed = QuestionEvent(request_id=new_request_id("seed"), question=GOOD_QUESTION)
    since = asyncio.run(end_offsets(settings, "qa.relevant"))
    from citestream.ops.client import publish_and_collect

    replies, _ = asyncio.run(publish_and_collect([seed], timeout_s=180))
    assert replies[seed.request_id].validation_status == "PASSED"
    real = next(json.loads(m.value) for m in asyncio.run(read_topic("qa.relevant", since=since, settings=settings))
                if m.key == seed.request_id.encode())
    assert real["facts"] and real["mac"], "the seed's record carries real chunk ids and its MAC"

    forged = _forgeries(real, settings)
    letters_since = asyncio.run(end_offsets(settings, "qa.deadletter"))
    answers_since = asyncio.run(end_offsets(settings, "answers"))
    asyncio.run(_send_raw(settings, "qa.relevant", [(rid.encode(), value) for rid, value in forged.values()]))
    wanted = {rid for rid, _ in forged.values()}
    letters = _wait_for_letters(letters_since, settings, lambda got: wanted <= {d["request_id"] for d in got})
    fates = {d["request_id"]: (d["stage"], d["reason_code"]) for d in letters if d["request_id"] in wanted}
    assert fates == {rid: ("assemble", "PROVENANCE_MISMATCH") for rid in wanted}, fates
    for letter in letters:
        if letter["request_id"] in wanted:  # every dead letter the worker writes is sealed too
            assert RecordSealer.from_file(settings.record_key_path).problem(letter) is None
    answered = [m for m in asyncio.run(read_topic("answers", since=answers_since, settings=settings))
                if m.key.decode() in wanted]
    assert answered == [], "a forged record reached an answer"
    _assert_alive_and_quiet(worker, settings)


def test_in_process_a_forged_relevant_record_is_refused_like_on_the_stream(settings, smoke_ingested):
    """``run_steps`` checks the MAC where the agent does: a forged record raises PROVENANCE_MISMATCH before assemble
    runs; the same record sealed by this process's key goes through."""
    deps = Deps(settings)
    question = QuestionEvent(request_id=new_request_id("inproc"), question=GOOD_QUESTION)
    retrieve, filter_step, *rest = QUESTION_PATH
    relevant = run_steps(question, [retrieve, filter_step], deps)
    assert isinstance(relevant, RelevantFactsRecord) and relevant.facts and relevant.mac
    relevant.facts[0].quote = MADE_UP  # altered after sealing
    with pytest.raises(RecordRejected) as refused:
        run_steps(relevant, rest, deps)
    assert refused.value.code == "PROVENANCE_MISMATCH"
    answer = run_steps(deps.sealer.seal(relevant), rest, deps)  # what a worker wrote itself passes the check
    assert answer.mac and deps.sealer.problem(answer) is None


@pytest.mark.e2e
def test_ask_and_eval_take_only_an_answer_a_worker_sealed(worker, settings):
    """Issue 48: ``citestream ask`` and ``eval`` took the first ``answers`` record of a key. Here a local publisher
    answers first — unsealed, a real sealed answer moved under this id, and one sealed with another key — while
    the worker is held still; the client passes over all three and returns the worker's own answer."""
    import os
    import signal
    import threading
    import time

    from citestream.models import ValidatedAnswer
    from citestream.ops.client import ReplyReader, publish_and_collect

    seed = QuestionEvent(request_id=new_request_id("seed"), question=GOOD_QUESTION)
    real = asyncio.run(publish_and_collect([seed], timeout_s=180))[0][seed.request_id].model_dump(mode="json")
    asked = QuestionEvent(request_id=new_request_id("asked"), question=GOOD_QUESTION)
    rid = asked.request_id
    forged = [json.dumps({**real, "request_id": rid, "answer_text": MADE_UP, "mac": None}).encode(),
              json.dumps({**real, "request_id": rid}).encode(),
              RecordSealer(secrets.token_bytes(32)).payload(ValidatedAnswer.model_validate(
                  {**real, "request_id": rid, "answer_text": MADE_UP}))]
    reader, got = ReplyReader(settings, "answers"), {}
    before = sum(asyncio.run(end_offsets(settings, "questions")).values())
    os.kill(worker.proc.pid, signal.SIGSTOP)  # the worker cannot answer before the forgeries are on the topic
    try:
        client = threading.Thread(target=lambda: got.update(asyncio.run(publish_and_collect(
            [asked], timeout_s=180, reader=reader))[0]))
        client.start()
        deadline = time.monotonic() + 30
        while sum(asyncio.run(end_offsets(settings, "questions")).values()) == before:  # sent: the client reads
            assert time.monotonic() < deadline, "the client never sent the question"
            time.sleep(0.1)
        asyncio.run(_send_raw(settings, "answers", [(rid.encode(), value) for value in forged]))
    finally:
        os.kill(worker.proc.pid, signal.SIGCONT)
    client.join(200)
    answer = got[rid]
    assert answer.answer_text != MADE_UP and answer.validation_status == "PASSED"
    assert reader.refused == 3
    _assert_alive_and_quiet(worker, settings)
