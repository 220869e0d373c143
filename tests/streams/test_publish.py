"""The publish step of the stage adapter (``streams.faust_app.StageAgent.publish``) on the real broker, in process.

Every record ends as an output or a dead letter (docs/security.md §2): an output that keeps its contract yet cannot
be written as JSON (a lone surrogate in free-form data) is dead-lettered with a reason, not left to the agent's
last-resort log line (issue N4).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time

import faust
import pytest
from faust.types import Message

from citestream.models import ComplianceRequest
from citestream.models.common import utcnow
from citestream.models.compliance import BoundConstraint, ComplianceReportRecord
from citestream.ops.client import read_topic

from tests.support.common import new_request_id

pytestmark = pytest.mark.e2e


def _event(app: faust.App, topic: str, key: bytes, value: bytes) -> faust.Event:
    """The event the agent would have consumed: the request's own bytes at a made-up position."""
    message = Message(topic=topic, partition=0, offset=0, timestamp=time.time(), timestamp_type=0, headers=[],
                      key=key, value=value, checksum=None)
    return faust.Event(app, key, value, [], message)


def test_an_output_that_cannot_be_serialized_is_dead_lettered_with_a_reason(topics, database, settings):
    from citestream.flow import FLOW
    from citestream.models import StageTiming
    from citestream.streams import faust_app

    step = next(s for s in FLOW if s.stage == "compliance")
    agent = faust_app.StageAgent(step)
    request = ComplianceRequest(request_id=new_request_id("unsealable"), document={"summary": "s"},
                                constraints=[BoundConstraint(id="C1", kind="must", text="Say s")])
    raw = request.model_dump_json().encode()
    # dict[str, Any] takes any Python string, so the output keeps its contract; JSON cannot carry the surrogate
    out = ComplianceReportRecord(**request.carry(policy_version="pv"), evaluator="llm",
                                 report={"gate": "pass", "notes": "lone \ud800 surrogate"})
    event = _event(faust_app.app, settings.topic(step.source), request.request_id.encode(), raw)
    timing = StageTiming(stage=step.stage, started_at=utcnow(), elapsed_ms=1.0)

    async def publish() -> bool:
        try:
            return await agent.publish(event, request, out, timing, faust_app.stream_deps())
        finally:
            await faust_app.app.producer.stop()

    assert asyncio.run(publish()) is False  # not sent: the caller records nothing for it

    letters, deadline = [], time.monotonic() + 60
    while not letters and time.monotonic() < deadline:
        letters = [json.loads(m.value) for m in asyncio.run(read_topic("qa.deadletter", settings=settings))
                   if m.key == request.request_id.encode()]
    assert letters, "the unserializable output was neither sent nor dead-lettered"
    letter = letters[0]
    assert (letter["reason_code"], letter["stage"], letter["source_topic"]) == (
        "OUTPUT_CONTRACT", "compliance", "compliance.requests")
    assert "cannot be serialized" in letter["reason"] and "surrogates not allowed" in letter["reason"]
    assert base64.b64decode(letter["original_value_b64"]) == raw  # the input, as it was read
    reports = asyncio.run(read_topic("compliance.reports", settings=settings))
    assert not [m for m in reports if m.key == request.request_id.encode()]
