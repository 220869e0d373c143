"""The stage functions: ``fn(record, deps) -> record``, one per row of ``flow.FLOW``.

Plain functions, so the faust agents (``streams``) and the in-process path (``inprocess``) run the very same
code. Each refuses a record by raising ``RecordRejected`` with a reason code; the caller dead-letters it.
"""

from __future__ import annotations

from .compliance import ReportInvalid, compliance_report, embedding_relatedness
from .core.errors import RecordRejected
from .deps import Deps
from .ingest import ingest_request
from .models import (
    ClaimVerifyRequest, ClaimVerifyResult, ComplianceReportRecord, ComplianceRequest, FactsRecord,
    GenerationRecord, IngestRequest, IngestResult, PromptRecord, QuestionEvent, RelevantFactsRecord,
    ValidatedAnswer,
)
from .models.ops import dead_letter_record
from .qa.assemble import assemble
from .qa.filter import run_filter
from .qa.generate import generate
from .qa.retrieve import find_facts
from .qa.validate import validate
from .qa.validate.provenance import ASSEMBLE, evidence_digest, generation_problem
from .refusals import premise_check_applies, withheld
from .verification import judge_from_settings, pack_finder, verify_claims
from .verification.premises import unsupported_premise


def retrieve_facts(question: QuestionEvent, deps: Deps) -> FactsRecord:
    """Phase A: facts with scores, never an answer. One reading transaction: the index version is read with the
    search's settings and the question's lexemes, and the candidate lists and their hydration share it. A question
    whose premise the documents do not support keeps no fact (``FALSE_PREMISE``; ``refusals.premise_check_applies``
    says when)."""
    with deps.search.reading(deps.policy.retrieval.hnsw_ef_search, question.question) as reader:
        reading = deps.reader.read(question.question, reader.index_version)
        facts = find_facts(question, reader, reader.index_version, deps.embedder, deps.policy, deps.relevance, reading)
    if premise_check_applies(reading.premises, facts.no_answer):
        refusal = unsupported_premise(reading.premises, question.scope, _claim_judge(deps), _pack_finder(deps))
        if refusal is not None:
            return withheld(facts, refusal)
    return facts


def filter_relevant(facts: FactsRecord, deps: Deps) -> RelevantFactsRecord:
    """Phase B: keep the relevant facts. An LLM reply that broke the contract is dead-lettered (LLM_REPLY_INVALID,
    the raw reply as payload, scrubbed and capped as every dead letter is) and the question goes on with the local
    filter."""
    llm = deps.llm if deps.settings.filter_mode == "llm" else None
    outcome = run_filter(facts, deps.policy, llm, deps.settings.llm_max_attempts)
    if outcome.rejected_reply is not None:
        deps.dead_letter(dead_letter_record(
            stage="filter", source="qa.facts", key=facts.request_id.encode(),
            value=outcome.rejected_reply.encode("utf-8", "replace"), code="LLM_REPLY_INVALID",
            reason=outcome.record.filter_fallback_reason or "", partition=None, offset=None,
            request_id=facts.request_id, policy_version=facts.policy_version, index_version=facts.index_version))
    return outcome.record


def assemble_prompt(relevant: RelevantFactsRecord, deps: Deps) -> PromptRecord:
    """R2: the AnswerBundle and the frozen prompt; its evidence digest is recorded before it is published."""
    record = assemble(relevant, deps.policy, deps.tokens.count, deps.tokens.name, deps.embedder.name)
    deps.provenance.record(record.request_id, ASSEMBLE, evidence_digest(record))
    return record


def generate_answer(prompt: PromptRecord, deps: Deps) -> GenerationRecord:
    """R3: the exact prompt bytes to the model, one ledger row."""
    return generate(prompt, deps.llm, deps.ledger, deps.settings.llm_max_attempts)


def validate_answer(generation: GenerationRecord, deps: Deps) -> ValidatedAnswer:
    """R5 + Phase C: cited and grounded, or the exact refusal. A generation the pipeline did not produce
    (``provenance``) is refused as PROVENANCE_MISMATCH before its evidence is trusted."""
    problem = generation_problem(generation, deps.provenance)
    if problem:
        raise RecordRejected("PROVENANCE_MISMATCH", problem)
    return validate(generation, deps.policy, deps.relevance, deps.claim_relevance.model)


def ingest_documents(request: IngestRequest, deps: Deps) -> IngestResult:
    """Parse, chunk, embed and store atomically."""
    return ingest_request(request, deps.chunks, deps.embedder)


def verify_claim_request(request: ClaimVerifyRequest, deps: Deps) -> ClaimVerifyResult:
    """A verdict per claim, on the hybrid grounding pack (retrieved when only a query came)."""
    return verify_claims(request, _claim_judge(deps), _pack_finder(deps), deps.policy.version,
                         deps.chunks.index_version())


def _claim_judge(deps: Deps):
    return judge_from_settings(deps.settings, lambda: deps.llm, lambda: deps.claim_relevance)


def _pack_finder(deps: Deps):
    return pack_finder(deps.search, deps.embedder, deps.policy, deps.claim_relevance)


def report_compliance(request: ComplianceRequest, deps: Deps) -> ComplianceReportRecord:
    """The offline or LLM evaluator's report, validated; an invalid one is refused as REPORT_INVALID."""
    try:
        return compliance_report(request, deps.policy.version, lambda: deps.llm, embedding_relatedness(deps.embedder))
    except ReportInvalid as exc:
        raise RecordRejected("REPORT_INVALID", str(exc)) from exc
