"""Provenance in process: a generation passes only if the assemble stage recorded its evidence and the ledger its reply.

The stream test (a forged record on qa.generations is dead-lettered) is in tests/streams/test_hostile.py.
"""

from __future__ import annotations

import uuid

import pytest

from citestream.qa.generate import generate
from citestream.llm import ExtractiveBackend
from citestream.models import GenerationRecord, PromptRecord
from citestream.qa.validate.provenance import ASSEMBLE, evidence_digest, generation_problem
from citestream.store import Ledger
from citestream.store.db import make_engine
from citestream.store.emissions import ProvenanceStore

from tests.support.bundles import prompt_record


@pytest.fixture()
def stores(migrated_database):
    engine = make_engine(migrated_database)
    yield ProvenanceStore(engine), Ledger(engine)
    engine.dispose()


def _through_kafka(record):
    """As the next stage sees it: JSON bytes parsed back into the topic's model."""
    return type(record).model_validate_json(record.model_dump_json())


def _pipeline(stores, request_id: str) -> GenerationRecord:
    provenance, ledger = stores
    prompt = prompt_record(request_id, "What does lecanemab target?")
    provenance.record(prompt.request_id, ASSEMBLE, evidence_digest(prompt))  # the assemble agent does this
    generation = generate(_through_kafka(prompt), ExtractiveBackend(), ledger)
    return _through_kafka(generation)


def test_a_generation_the_pipeline_made_passes(stores):
    generation = _pipeline(stores, f"prov-{uuid.uuid4().hex[:8]}")
    assert generation_problem(generation, stores[0]) is None
    assert evidence_digest(generation) == evidence_digest(_through_kafka(generation))


def test_the_digest_is_the_same_on_both_sides_of_generate():
    prompt = prompt_record("prov-digest", "What does lecanemab target?")
    generation = generate(prompt, ExtractiveBackend(), _NoLedger())
    assert evidence_digest(PromptRecord.model_validate_json(prompt.model_dump_json())) == evidence_digest(generation)


@pytest.mark.parametrize("forge, why", [
    (lambda g: g.llm.__setattr__("raw_model_text", '{"answer_sentences": [], "confidence": "High"}'), "reply"),
    (lambda g: g.answer_bundle.selected_evidence[0].__setattr__("sanitized_text", "Apixaban cures everything."),
     "assemble"),
    (lambda g: g.__setattr__("question", "What does apixaban cure?"), "assemble"),
    (lambda g: g.__setattr__("request_id", f"other-{uuid.uuid4().hex[:6]}"), "assemble"),
    (lambda g: g.__setattr__("llm", None), "model execution"),
])
def test_a_forged_generation_is_refused(stores, forge, why):
    generation = _pipeline(stores, f"prov-{uuid.uuid4().hex[:8]}")
    forge(generation)
    problem = generation_problem(generation, stores[0])
    assert problem is not None and why in problem, problem


def test_a_generation_whose_prompt_no_ledger_row_records_is_refused(stores):
    """The provenance digest and the ledger row are read in one statement: each check still stands on its own."""
    provenance, _ = stores
    prompt = prompt_record(f"prov-{uuid.uuid4().hex[:8]}", "What does lecanemab target?")
    provenance.record(prompt.request_id, ASSEMBLE, evidence_digest(prompt))
    generation = _through_kafka(generate(_through_kafka(prompt), ExtractiveBackend(), _NoLedger()))
    assert generation_problem(generation, provenance) == "no ledger row records this prompt being sent to a model"


class _NoLedger:
    def append(self, entry) -> bool:
        return True
