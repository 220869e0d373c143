"""Record contracts: valid records round-trip, invalid ones are rejected, schemas are published."""

import json

import pytest
from pydantic import ValidationError

from citestream.models import (
    ComplianceRequest, DeadLetter, Fact, IngestRequest, QuestionEvent, ValidatedAnswer, request_digest,
)
from citestream.topics import REGISTRY


def test_question_event_defaults_and_round_trip():
    q = QuestionEvent(request_id="r-1", question="What is a DMF?")
    assert q.scope == "MIXED" and q.top_k == 8 and q.policy_version is None
    assert QuestionEvent.model_validate_json(q.model_dump_json()) == q


@pytest.mark.parametrize("bad", [
    {"question": "x"},                                          # missing request_id
    {"request_id": "r", "question": ""},                        # empty question
    {"request_id": "r", "question": "   "},                     # blank question
    {"request_id": "r", "question": "a" * 2001},                # too long
    {"request_id": "r", "question": "what\x00now"},             # null byte
    {"request_id": "r", "question": "bell\x07"},                # control character
    {"request_id": "r", "question": "ok", "scope": "WHO"},      # unknown scope
    {"request_id": "r", "question": "ok", "extra": 1},          # unknown field
    {"request_id": "has space", "question": "ok"},              # request_id not key-safe
])
def test_question_event_rejects(bad):
    with pytest.raises(ValidationError):
        QuestionEvent.model_validate(bad)


@pytest.mark.parametrize("given,expected", [(0, 1), (-1, 1), (999, 100), (8, 8)])
def test_top_k_is_clamped(given, expected):
    assert QuestionEvent(request_id="r", question="q", top_k=given).top_k == expected


def test_fact_score_must_be_cosine_range():
    with pytest.raises(ValidationError):
        Fact(quote="q", pdf="a.pdf", page=1, chunk_id="c", score=1.5, doc_id="d")
    with pytest.raises(ValidationError):
        Fact(quote="q", pdf="a.pdf", page=0, chunk_id="c", score=0.5, doc_id="d")


def test_answer_requires_classification_and_status():
    with pytest.raises(ValidationError):
        ValidatedAnswer(request_id="r", policy_version="p", question="q", scope="MIXED", status="maybe",
                        answer_text="x", classification="REFUSAL", generation_status="OK",
                        validation_status="PASSED")


def test_dead_letter_keeps_original_bytes():
    d = DeadLetter(request_id="r", stage="retrieve", source_topic="questions", reason_code="DECODE_ERROR",
                   reason="bad", original_value_b64="AAE=")
    assert json.loads(d.model_dump_json())["original_value_b64"] == "AAE="
    with pytest.raises(ValidationError):
        DeadLetter(request_id="r", stage="s", source_topic="t", reason_code="WHATEVER", reason="x",
                   original_value_b64="")


def test_ingest_request_accepts_inline_documents():
    r = IngestRequest(request_id="i-1", documents=[{"docId": "d1", "text": "hello"}])
    assert r.documents[0].docId == "d1" and r.collection == "citestream"


def test_every_topic_record_carries_the_envelope():
    for spec in REGISTRY.values():
        fields = spec.value_model.model_fields
        for name in ("request_id", "schema_version", "policy_version", "trace"):
            assert name in fields, f"{spec.value_model.__name__} lacks {name}"
        assert spec.value_model.model_config.get("extra") == "forbid"


def test_schemas_command_writes_one_schema_per_topic(tmp_path):
    from citestream.cli import main

    assert main(["schemas", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(f"{name}.schema.json" for name in REGISTRY)
    schema = json.loads((tmp_path / "questions.schema.json").read_text())
    assert schema["additionalProperties"] is False and "question" in schema["required"]


def test_request_digest_is_what_was_asked_and_nothing_else():
    """Review54b, N-M2: one function for the worker and the consumer; the same request read back from JSON gives
    the same digest, a request under the same id with another document or another constraint text another one,
    and the envelope (trace, versions) none of it."""
    constraints = [{"id": "no_usb", "kind": "exclusion", "text": "No USB storage devices"}]
    mine = ComplianceRequest(request_id="team-42", document={"decision": "Ship without USB ports"},
                             constraints=constraints)
    again = ComplianceRequest.model_validate(json.loads(mine.model_dump_json()) | {"policy_version": "p"})
    assert request_digest(again) == request_digest(mine)
    assert len(request_digest(mine)) == 64
    other_document = mine.model_copy(update={"document": {"decision": "Ship with USB ports"}})
    other_text = ComplianceRequest(request_id="team-42", document=mine.document,
                                   constraints=[constraints[0] | {"text": "No cloud storage"}])
    assert len({request_digest(r) for r in (mine, other_document, other_text)}) == 3
