"""Through Kafka with the session worker: the same question asked twice gives byte-identical prompts on
`qa.prompts`, and every PromptRecord there validates against the JSON Schema `citestream schemas` publishes."""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest

from citestream.cli import main as cli
from citestream.ops.client import ask_many, read_topic
from citestream.models import QuestionEvent

from tests.support.common import new_request_id
from tests.support.reliability import end_offsets

pytestmark = pytest.mark.e2e

QUESTION = "By how much do DOACs such as apixaban reduce stroke risk in atrial fibrillation?"
UNANSWERABLE = "What is the boiling point of liquid nitrogen at sea level?"


@pytest.fixture(scope="module")
def published_schema(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("schemas")
    assert cli(["schemas", "--out", str(out)]) == 0
    return json.loads((out / "qa.prompts.schema.json").read_text())


def _validator(schema: dict, definition: str | None = None):
    target = schema if definition is None else {"$ref": f"#/$defs/{definition}", "$defs": schema["$defs"]}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(target)
    return cls(target)


def _prompt_records(settings, request_ids: set[str], since: dict[int, int]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {rid: [] for rid in request_ids}
    for message in asyncio.run(read_topic("qa.prompts", since=since, settings=settings)):
        rid = message.key.decode() if message.key else None
        if rid in found:
            found[rid].append(json.loads(message.value))
    return found


def test_same_question_twice_through_kafka_gives_byte_identical_prompts(worker, settings, published_schema):
    asked = [QuestionEvent(request_id=new_request_id("asm"), question=q)
             for q in (QUESTION, "  By how much do DOACs such as apixaban   reduce stroke risk in atrial fibrillation?",
                       UNANSWERABLE)]
    before = asyncio.run(end_offsets(settings, "qa.prompts"))  # what earlier runs left there is not read
    replies, _ = ask_many(asked, timeout_s=120)
    assert set(replies) == {q.request_id for q in asked}, worker.log_path.read_text()[-3000:]

    records = _prompt_records(settings, {q.request_id for q in asked}, before)
    first, second, refused = (records[q.request_id] for q in asked)
    assert len(first) == len(second) == len(refused) == 1
    p1, p2 = first[0]["prompt"], second[0]["prompt"]
    assert p1["build_status"] == "OK" and p1["prompt_text"]
    assert p1["prompt_text"].encode("utf-8") == p2["prompt_text"].encode("utf-8")
    assert p1["prompt_sha256"] == p2["prompt_sha256"]
    assert first[0]["answer_bundle"]["evidence_block_text"] == second[0]["answer_bundle"]["evidence_block_text"]
    assert replies[asked[0].request_id].prompt_sha256 == p1["prompt_sha256"]

    whole = _validator(published_schema)
    bundle_schema = _validator(published_schema, "AnswerBundle")
    build_schema = _validator(published_schema, "PromptBuildResult")
    for record in (first[0], second[0], refused[0]):
        whole.validate(record)
        bundle_schema.validate(record["answer_bundle"])
        build_schema.validate(record["prompt"])
    assert refused[0]["answer_bundle"]["assembly_status"] in {"NO_EVIDENCE", "OK"}


def test_schema_rejects_a_broken_record(published_schema):
    bundle_schema = _validator(published_schema, "AnswerBundle")
    with pytest.raises(jsonschema.ValidationError):
        bundle_schema.validate({"request_id": "r", "assembly_status": "MAYBE"})
