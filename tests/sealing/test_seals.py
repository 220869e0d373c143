"""The MAC every record a worker writes carries, in process: what it covers, what breaks it, which topics have it."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from citestream import flow
from citestream.core.errors import RecordRejected
from citestream.sealing.keys import KeyFileOpen, load_key
from citestream.models import FactsRecord, QuestionEvent, RetrievalTrace, ValidatedAnswer
from citestream.sealing import KeyUnavailable, RecordSealer, RecordVerifier, public_path
from citestream.topics import REGISTRY, TopicWiringError, spec

KEY = b"k" * 32


def _facts() -> FactsRecord:
    return FactsRecord(request_id="r-1", policy_version="p", question="What does lecanemab target? \u00e9\u200d",
                       scope="MIXED", top_k=8, facts=[], fallback_used=False,
                       retrieval_trace=RetrievalTrace(stages=["semantic"]))


def test_a_record_read_back_from_its_bytes_keeps_its_mac_and_any_change_breaks_it():
    sealer = RecordSealer(KEY)
    data = json.loads(sealer.payload(_facts()))
    assert sealer.problem(data) is None
    for field, value in (("question", "What does aducanumab target?"), ("top_k", 9),
                         ("trace", [{"stage": "x", "started_at": "2026-01-01T00:00:00Z", "elapsed_ms": 1.0}]),
                         ("a_field_added_later", 1)):  # a field the model does not know yet is covered too
        assert "does not match" in sealer.problem({**data, field: value}), field
    assert "no seal" in sealer.problem({k: v for k, v in data.items() if k != "mac"})
    assert "does not match" in RecordSealer(b"x" * 32).problem(data)
    assert sealer.problem([data]) == "not a record object"
    assert "does not match" in sealer.problem({**data, "question": "\ud800"})  # a lone surrogate: a fate, not a crash
    with pytest.raises(RecordRejected) as refused:
        sealer.check({**data, "mac": "0" * 128})
    assert refused.value.code == "PROVENANCE_MISMATCH"
    assert "does not match" in sealer.problem({**data, "mac": "é" * 128})  # not hex: a fate, not a crash


def test_in_process_seal_equals_the_topic_bytes_mac():
    sealer = RecordSealer(KEY)
    record = _facts()
    assert sealer.seal(record).mac == json.loads(sealer.payload(record))["mac"]
    assert sealer.problem(record) is None


def test_the_worker_writes_sealed_topics_and_publishers_write_unsealed_ones():
    outside = {"questions", "documents.ingest", "claims.verify", "compliance.requests"}
    assert {name for name, topic in REGISTRY.items() if not topic.sealed} == outside
    assert all(spec(step.sink).sealed for step in flow.FLOW)
    assert [step.stage for step in flow.FLOW if step.checks_mac] == ["filter", "assemble", "generate", "validate"]
    assert "mac" not in QuestionEvent.model_fields and "mac" in ValidatedAnswer.model_fields


def _echo(record: FactsRecord, deps) -> QuestionEvent:
    raise NotImplementedError


def test_a_step_that_writes_an_unsealed_topic_is_refused_when_the_flow_is_built():
    bad = flow.Step("echo", "qa.facts", "questions", _echo)
    with pytest.raises(TopicWiringError, match="not Sealed"):
        flow._check((*flow.FLOW[:1], bad), flow.QUESTION_PATH)


def test_the_key_file_is_made_once_0600_and_readers_never_make_it(tmp_path):
    path = tmp_path / "keys" / "records.key"
    with pytest.raises(KeyUnavailable, match="no record key"):
        RecordSealer.from_file(path)
    assert not path.exists()
    keys: list[bytes | None] = []
    threads = [threading.Thread(target=lambda: keys.append(load_key(path, create=True))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 1 and len(keys[0] or b"") == 32  # every process that raced got the same key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    path.write_text("not hex")
    with pytest.raises(KeyUnavailable, match="cannot read"):
        RecordSealer.from_file(path)


def test_the_page_and_the_clients_check_seals_with_the_public_key_and_cannot_make_one(tmp_path):
    """Issue 48: one symmetric key let the page (or its PDF child) seal records. The worker writes the public key
    beside its private one; a verifier built from it checks seals and has no way to make one."""
    path = tmp_path / "keys" / "records.key"
    sealer = RecordSealer.from_file(path, create=True)
    public = public_path(path)
    assert stat.S_IMODE(os.stat(public).st_mode) == 0o600 and len(bytes.fromhex(public.read_text())) == 32
    verifier = RecordVerifier.from_file(public)
    data = json.loads(sealer.payload(_facts()))
    assert verifier.problem(data) is None
    assert "does not match" in verifier.problem({**data, "question": "What does aducanumab target?"})
    assert not hasattr(verifier, "seal") and not hasattr(verifier, "mac")
    assert path.read_text().strip() not in public.read_text()  # the private key is nowhere in what it reads


def test_a_key_file_others_may_read_or_a_public_key_others_may_write_is_refused(tmp_path):
    path = tmp_path / "keys" / "records.key"
    RecordSealer.from_file(path, create=True)
    os.chmod(path, 0o644)
    with pytest.raises(KeyUnavailable, match="mode 0644: group or others may read it"):
        RecordSealer.from_file(path)
    with pytest.raises(KeyFileOpen):
        load_key(path)
    os.chmod(path, 0o600)
    os.chmod(public_path(path), 0o666)
    with pytest.raises(KeyUnavailable, match="may write it"):
        RecordVerifier.from_file(public_path(path))
    RecordSealer.from_file(path, create=True)  # a worker writes it again, with its mode
    assert stat.S_IMODE(os.stat(public_path(path)).st_mode) == 0o600
    os.chmod(public_path(path), 0o644)  # others may read a public key
    RecordVerifier.from_file(public_path(path))
