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
from citestream.models import ComplianceRequest
from citestream.models.compliance import BoundConstraint
from citestream.topics import create_topics

from tests.support.common import WorkerProcess, new_request_id
from tests.support.fake_openai import FakeOpenAI

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
