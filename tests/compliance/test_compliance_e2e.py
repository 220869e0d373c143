"""The compliance agent through the real broker: offline reports, LLM reports, and REPORT_INVALID dead letters.

The LLM path runs in its own worker (own topic prefix and consumer group) whose
OpenAI-compatible backend is a local fake server replying with canned reports.
"""

import asyncio
import base64
import copy
import json
import time
from pathlib import Path

import pytest

from citestream.ops.client import publish_and_collect, read_topic
from citestream.config import Settings
from citestream.models import ComplianceRequest, request_digest
from citestream.models.compliance import BoundConstraint
from citestream.topics import create_topics

from tests.support.common import WorkerProcess, new_request_id, sealed_under
from tests.support.fake_openai import FakeOpenAI
from tests.support.reliability import end_offsets

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).parent / "fixtures"  # tests/compliance/fixtures
VALID = json.loads((FIXTURES / "contract_valid_example.json").read_text())
FOLLOWUP = json.loads((FIXTURES / "followup_vs_reopening.json").read_text())


def _request(document, constraints, evaluator="offline") -> ComplianceRequest:
    return ComplianceRequest(request_id=new_request_id("comp"), document=document, evaluator=evaluator,
                             constraints=[BoundConstraint(**c) for c in constraints])


def _with_question(question: str) -> dict:
    document = copy.deepcopy(FOLLOWUP["base_document"])
    document["unknowns"] = [{"question": question}]
    return document


def test_offline_reports_through_kafka(worker):
    follow_up = _request(_with_question("How many family members will use the app?"), FOLLOWUP["constraints"])
    reopening = _request(_with_question("Should we consider classroom use instead?"), FOLLOWUP["constraints"])
    replies, _ = asyncio.run(publish_and_collect([follow_up, reopening], source="compliance.requests",
                                                 reply="compliance.reports", timeout_s=120))
    ok, reopened = replies[follow_up.request_id].report, replies[reopening.request_id].report
    assert ok["gate"] == "pass" and ok["correlation_id"] == follow_up.request_id
    assert reopened["gate"] == "fail" and reopened["summary"]["blocked_reasons"] == ["DEPLOYMENT_CONTEXT reopened"]
    assert {(f["code"], tuple(f["evidence_pointers"])) for f in reopened["findings"]} == {
        ("BOUND_REOPENED", ("$.unknowns[0].question",))}
    assert [t.stage for t in replies[reopening.request_id].trace] == ["compliance"]


def test_a_sealed_report_binds_to_the_document_and_constraints_it_judged(worker, settings):
    """Review54b, N-M2: another party's request under the victim's request id, whose document passes where the
    victim's fails. Both reports are sealed and name the victim's id as ``correlation_id``; only the victim's own
    carries the digest the victim computes from the document and constraints it sent."""
    victim = _request(_with_question("Should we consider classroom use instead?"), FOLLOWUP["constraints"])
    other = ComplianceRequest(request_id=victim.request_id, constraints=victim.constraints,
                              document=_with_question("How many family members will use the app?"))
    since = asyncio.run(end_offsets(settings, "compliance.reports"))
    asyncio.run(publish_and_collect([victim, other], source="compliance.requests", reply="compliance.reports",
                                    timeout_s=120))
    sealed = sealed_under(settings, "compliance.reports", since, victim.request_id, 2)

    assert sorted(r.report["gate"] for r in sealed) == ["fail", "pass"]
    assert {r.report["correlation_id"] for r in sealed} == {victim.request_id}  # the report alone cannot tell
    mine = [r.report["gate"] for r in sealed if r.request_digest == request_digest(victim)]
    assert mine == ["fail"]
    assert request_digest(other) != request_digest(victim)


@pytest.fixture(scope="module")
def llm_worker(topics, database, tmp_path_factory, settings):
    """A worker whose LLM backend is the fake server, on topics of its own."""
    prefix = f"{settings.topic_prefix}compliance-llm."
    create_topics(settings.bootstrap_servers, prefix, retention_hours=settings.topic_retention_hours)
    with FakeOpenAI() as fake:
        proc = WorkerProcess(tmp_path_factory.mktemp("llm-worker") / "worker.log", env={
            "CITESTREAM_TOPIC_PREFIX": prefix, "CITESTREAM_APP_ID": f"citestream-{prefix.strip('.')}",
            "CITESTREAM_LLM_BACKEND": "openai", "CITESTREAM_OPENAI_BASE_URL": fake.base_url,
            "CITESTREAM_OPENAI_MODEL": "fake-qa"})
        try:
            proc.wait_ready(timeout_s=300)  # a second worker on a busy machine
            yield fake, Settings(topic_prefix=prefix)
        finally:
            proc.stop()


def test_llm_reports_are_validated_before_emission_else_dead_lettered(llm_worker):
    fake, llm_settings = llm_worker
    fake.replies["scenario-e2e-valid"] = json.dumps(VALID["report"])
    hallucinated = copy.deepcopy(VALID["report"])
    hallucinated["findings"][0]["constraint_id"] = "GAMIFICATION"
    fake.replies["scenario-e2e-invalid"] = json.dumps(hallucinated)
    good = _request({"summary": "scenario-e2e-valid"}, VALID["constraints"], evaluator="llm")
    bad = _request({"summary": "scenario-e2e-invalid"}, VALID["constraints"], evaluator="llm")

    replies, _ = asyncio.run(publish_and_collect(
        [good], raw=[(bad.request_id.encode(), bad.model_dump_json().encode())], source="compliance.requests",
        reply="compliance.reports", timeout_s=120, settings=llm_settings))
    record = replies[good.request_id]
    assert record.evaluator == "llm" and record.report["gate"] == "pass"
    assert record.report["meta"]["model"] == "fake-qa"

    letters, deadline = [], time.monotonic() + 60
    while not letters and time.monotonic() < deadline:
        letters = [json.loads(m.value) for m in asyncio.run(read_topic("qa.deadletter", settings=llm_settings))
                   if m.key == bad.request_id.encode()]
    assert letters, "the invalid report was neither emitted nor dead-lettered"
    letter = letters[0]
    assert letter["reason_code"] == "REPORT_INVALID" and letter["stage"] == "compliance"
    assert "rule 4" in letter["reason"] and "GAMIFICATION" in letter["reason"]
    assert json.loads(base64.b64decode(letter["original_value_b64"]))["request_id"] == bad.request_id

    later, _ = asyncio.run(publish_and_collect([], source="compliance.requests", reply="compliance.reports",
                                               timeout_s=1, settings=llm_settings))
    assert bad.request_id not in later


def _letters_for(request_ids: set[str], llm_settings, timeout_s: float = 60) -> dict[str, dict]:
    """The dead letter of each of ``request_ids`` (waits until all are there or the time is up)."""
    keys, found, deadline = {r.encode() for r in request_ids}, {}, time.monotonic() + timeout_s
    while len(found) < len(keys) and time.monotonic() < deadline:
        found = {m.key.decode(): json.loads(m.value)
                 for m in asyncio.run(read_topic("qa.deadletter", settings=llm_settings)) if m.key in keys}
    return found


def test_llm_reply_with_a_lone_surrogate_or_over_the_cap_is_dead_lettered(llm_worker):
    """N4: each reply has a fate. A ``\\ud800`` escape in a report that keeps the schema and the rules is a
    malformed reply (REPORT_INVALID, as prose is); a reply over the reply cap is a failed call (STAGE_ERROR, as an
    outage is). Before, the first left the request with neither report nor dead letter, the second was read."""
    from citestream.core.bounds import MAX_REPLY_CHARS

    fake, llm_settings = llm_worker
    lone = copy.deepcopy(VALID["report"])
    lone["findings"][0]["message"] = "injected \ud800"
    fake.replies["scenario-e2e-surrogate"] = json.dumps(lone)
    fake.replies["scenario-e2e-over-cap"] = json.dumps(VALID["report"]) + " " * MAX_REPLY_CHARS
    surrogate = _request({"summary": "scenario-e2e-surrogate"}, VALID["constraints"], evaluator="llm")
    over_cap = _request({"summary": "scenario-e2e-over-cap"}, VALID["constraints"], evaluator="llm")

    asyncio.run(publish_and_collect([], raw=[(r.request_id.encode(), r.model_dump_json().encode())
                                             for r in (surrogate, over_cap)],
                                    source="compliance.requests", reply="compliance.reports", timeout_s=1,
                                    settings=llm_settings))
    letters = _letters_for({surrogate.request_id, over_cap.request_id}, llm_settings)
    assert set(letters) == {surrogate.request_id, over_cap.request_id}, "a reply was neither emitted nor dead-lettered"
    reports = asyncio.run(read_topic("compliance.reports", settings=llm_settings))
    assert not [m for m in reports if m.key in {surrogate.request_id.encode(), over_cap.request_id.encode()}]
    assert letters[surrogate.request_id]["reason_code"] == "REPORT_INVALID"
    assert "lone surrogate" in letters[surrogate.request_id]["reason"]
    assert letters[over_cap.request_id]["reason_code"] == "STAGE_ERROR"
    assert f"more than the {MAX_REPLY_CHARS}" in letters[over_cap.request_id]["reason"]
