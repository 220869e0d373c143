"""Internal topics are not a side door: the validate stage accepts only a generation the pipeline produced.

Anyone who can publish to ``qa.generations`` could otherwise hand the validator
evidence of their own and have it "validated" against itself. So the assemble
stage writes a digest of what it emits (question, scope, evidence bundle,
prompt hash, refusal flags) to the insert-only ``provenance`` table before it
publishes, and the generate stage's ledger row holds the prompt hash and the
SHA-256 of the model's reply. A generation passes only when its digest is one
the assemble stage recorded for its request_id and, when it carries a model
reply, that reply is the one the ledger recorded for that prompt. Neither table
can be written by a topic publisher; the worker's role can only append to them.
"""

from __future__ import annotations

import json

from ...core.hashing import sha256_hex
from ...models import GenerationRecord, PromptRecord

ASSEMBLE = "assemble"


def evidence_digest(record: PromptRecord | GenerationRecord) -> str:
    """SHA-256 of what a generation inherits from its prompt record: the same value on both sides of generate."""
    prompt_sha256 = record.prompt.prompt_sha256 if isinstance(record, PromptRecord) else record.prompt_sha256
    material = {
        "request_id": record.request_id, "question": record.question, "scope": record.scope,
        "answer_bundle": record.answer_bundle.model_dump(mode="json"), "prompt_sha256": prompt_sha256,
        "fallback_used": record.fallback_used,
        "no_answer": record.no_answer.model_dump(mode="json") if record.no_answer else None,
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(text)


def generation_problem(generation: GenerationRecord, provenance) -> str | None:
    """Why ``generation`` is not one the pipeline produced, or None when it is.

    ``provenance`` is a ``ProvenanceStore`` (it reads the ledger's row for the prompt in the same round trip).
    """
    found = provenance.lookup(generation.request_id, ASSEMBLE, evidence_digest(generation), generation.prompt_sha256)
    if not found.known:
        return "no assemble stage produced this question and evidence for this request_id"
    if generation.prompt_sha256 is None:
        return None  # no prompt was built, so no model was called: nothing else to match
    if found.generate_payload is None:
        return "no ledger row records this prompt being sent to a model"
    llm = generation.llm
    if llm is None or llm.prompt_sha256 != generation.prompt_sha256:
        return "the model execution does not match the prompt the ledger recorded"
    payload = found.generate_payload
    reply_sha256 = sha256_hex(llm.raw_model_text)
    if payload.get("output_sha256") != reply_sha256 or payload.get("generation_status") != llm.generation_status:
        return "the model reply is not the one the ledger recorded for this prompt"
    return None
