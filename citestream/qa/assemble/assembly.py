"""R2 answer assembly: retrieval_bundle → AnswerBundle → frozen prompt (answer-assembly-contract R2.0–R2.6).

The stage in order: validate the input contract (R2.0A; any break → FAILED,
nothing selected, no prompt), select (R2.2, ``selection``), freeze the order
and assign anchors (R2.4), render the evidence block (R2.5), build the prompt
and validate its final budget, dropping the lowest-ranked chunk and
rebuilding until it fits (PB4), check its structure (P1), hash it (PB5).
Empty evidence after any gate is NO_EVIDENCE: no prompt, no LLM call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise

from pydantic import ValidationError

from ...core.tokens import TokenCount
from ...models import AnswerBundle, PromptBuildResult, PromptRecord, RelevantFactsRecord
from ...models.assembly import AssemblyMetrics, AssemblyTrace, DropRecord, RetrievalResult, SelectedEvidence
from ...core.policy import Policy
from .prompt import (
    TEMPLATE_VERSION, check_structure, count_prompt_tokens, normalize_question, render_prompt, sha256_hex,
    template_sha256,
)
from ...models.evidence import render_evidence
from ...core.sanitize import sanitize
from .selection import overlap_ratio, select, truncate_to_tokens


__all__ = ["assemble", "assemble_bundle", "bundle_from_facts", "overlap_ratio", "render_evidence", "sanitize",
           "select", "truncate_to_tokens"]


def bundle_from_facts(record: RelevantFactsRecord) -> list[RetrievalResult]:
    """Phase B facts as the R2.0A retrieval_bundle's typed rows: rank is the fact's position among the relevant
    facts. A fact's own contract holds every field a row needs, so no row is re-parsed."""
    return [
        RetrievalResult(chunk_id=f.chunk_id, knowledge_id=f.knowledge_id, chunk_text=f.quote, rank=i,
                        similarity_score=f.score, pdf=f.pdf, page=f.page)
        for i, f in enumerate(record.facts)
    ]


def validate_input(rows: Sequence[Mapping | RetrievalResult]) -> tuple[list[RetrievalResult], str | None]:
    """R2.0A hard contract: typed rows, ranks from 0 strictly increasing, chunk ids unique."""
    parsed = []
    for i, row in enumerate(rows):
        try:
            parsed.append(row if isinstance(row, RetrievalResult) else RetrievalResult.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            return [], f"retrieval_bundle[{i}].{'.'.join(map(str, err['loc']))}: {err['msg']}"
    ranks = sorted(r.rank for r in parsed)
    if ranks and ranks[0] != 0:
        return [], "rank must start at 0"
    if any(b <= a for a, b in pairwise(ranks)):
        return [], "ranks must strictly increase (a rank is repeated)"
    if len({r.chunk_id for r in parsed}) != len(parsed):
        return [], "chunk_id repeated in retrieval_bundle"
    return parsed, None


def assemble_bundle(
    request_id: str, rows: Sequence[Mapping | RetrievalResult], question: str, policy: Policy, count: TokenCount,
    trace: AssemblyTrace, *, empty_means_no_evidence: bool = False,
) -> tuple[AnswerBundle, PromptBuildResult]:
    """One request's AnswerBundle and PromptBuildResult. Deterministic: the same inputs give the same bytes."""
    selection_policy = policy.selection
    failed = _trace_violation(trace)
    parsed, failed = ([], failed) if failed else validate_input(rows)
    if not failed and not parsed and not empty_means_no_evidence:
        failed = "retrieval_bundle is empty and was not declared NO_EVIDENCE"
    if failed:
        return _failed(request_id, len(rows), trace, failed)

    selection = select(parsed, selection_policy, count)
    evidence, drops = selection.evidence, selection.drops
    question_text = normalize_question(question)
    rebuilds = 0
    while True:  # PB4: validate the whole prompt; drop the lowest-ranked chunk and rebuild until it fits
        block = render_evidence(evidence)
        prompt_text = render_prompt(block, question_text)
        tokens = count_prompt_tokens(prompt_text, selection_policy.reserved_output_tokens, count)
        if tokens.total_prompt_tokens <= selection_policy.max_total_prompt_tokens:
            break
        if not evidence:
            return _failed(request_id, len(parsed), trace,
                           f"prompt needs {tokens.total_prompt_tokens} tokens without any evidence "
                           f"(max_total_prompt_tokens {selection_policy.max_total_prompt_tokens}): "
                           "the question is too long",
                           drops)
        drops.append(DropRecord(chunk_id=evidence.pop().chunk_id, code="DROP_BUDGET"))
        rebuilds += 1

    metrics = _metrics(len(parsed), evidence, drops, count(block) if evidence else 0, selection_policy.chunk_token_cap)
    if not evidence:
        return (AnswerBundle(request_id=request_id, assembly_status="NO_EVIDENCE", trace=trace,
                             assembly_metrics=metrics),
                PromptBuildResult(build_status="NO_EVIDENCE", template_version=TEMPLATE_VERSION,
                                  template_sha256=template_sha256()))
    broken = check_structure(prompt_text, block, question_text)
    if broken:
        return _failed(request_id, len(parsed), trace, f"prompt structure: {broken}", drops)
    bundle = AnswerBundle(
        request_id=request_id, assembly_status="OK", selected_evidence=evidence, evidence_block_text=block,
        evidence_block_sha256=sha256_hex(block), anchor_map={e.citation_anchor: e.chunk_id for e in evidence},
        trace=trace, assembly_metrics=metrics,
    )
    return bundle, PromptBuildResult(
        build_status="OK", template_version=TEMPLATE_VERSION, template_sha256=template_sha256(),
        prompt_text=prompt_text, prompt_sha256=sha256_hex(prompt_text),
        allowed_anchors=[e.citation_anchor for e in evidence], tokens=tokens, rebuilds=rebuilds,
    )


def _trace_violation(trace: AssemblyTrace) -> str | None:
    missing = trace.missing()
    return f"missing trace fields: {', '.join(missing)}" if missing else None


def _metrics(retrieved: int, evidence: list[SelectedEvidence], drops: list[DropRecord], evidence_tokens: int,
             chunk_token_cap: int) -> AssemblyMetrics:
    codes = Counter(d.code for d in drops)
    truncated = [e.chunk_id for e in evidence if e.truncated]
    return AssemblyMetrics(
        retrieved_k=retrieved, selected_k=len(evidence), dedup_dropped_count=codes["DROP_DUP"],
        budget_dropped_count=codes["DROP_BUDGET"], per_knowledge_cap_dropped_count=codes["DROP_PER_KNOWLEDGE_CAP"],
        empty_dropped_count=codes["DROP_EMPTY_AFTER_SANITIZE"],
        below_floor_dropped_count=codes["DROP_BELOW_SIMILARITY_FLOOR"],
        max_chunks_dropped_count=codes["DROP_MAX_CHUNKS"], unsafe_dropped_count=codes["DROP_UNSAFE_STRUCTURE"],
        evidence_token_count=evidence_tokens, chunk_token_cap=chunk_token_cap, truncation_applied=bool(truncated),
        truncated_chunk_ids=truncated, drop_reason_codes=sorted(codes), drops=drops,
    )


def _failed(request_id: str, retrieved: int, trace: AssemblyTrace, reason: str,
            drops: Sequence[DropRecord] = ()) -> tuple[AnswerBundle, PromptBuildResult]:
    codes = sorted({d.code for d in drops})
    bundle = AnswerBundle(request_id=request_id, assembly_status="FAILED", trace=trace, failure_reason=reason,
                          assembly_metrics=AssemblyMetrics(retrieved_k=retrieved, selected_k=0,
                                                           drop_reason_codes=codes, drops=list(drops)))
    return bundle, PromptBuildResult(build_status="FAILED", template_version=TEMPLATE_VERSION, failure_reason=reason)


def make_trace(policy: Policy, index_version: str | None, top_k: int | None, tokenizer_name: str,
               embedding_model: str) -> AssemblyTrace:
    return AssemblyTrace(
        index_version=index_version, policy_version=policy.version, embedding_model=embedding_model,
        tokenizer=tokenizer_name, retrieval_top_k=top_k, thresholds=policy.thresholds(),
        selection_policy=policy.selection.snapshot(),
    )


def assemble(record: RelevantFactsRecord, policy: Policy, count: TokenCount, tokenizer_name: str,
             embedding_model: str) -> PromptRecord:
    """The assemble agent's stage: Phase B facts in, the AnswerBundle and the frozen prompt out."""
    trace = make_trace(policy, record.index_version, record.top_k, tokenizer_name, embedding_model)
    bundle, prompt = assemble_bundle(record.request_id, bundle_from_facts(record), record.question, policy, count,
                                     trace, empty_means_no_evidence=record.no_evidence)
    return PromptRecord(
        **record.carry(), question=record.question, scope=record.scope, answer_bundle=bundle, prompt=prompt,
        fallback_used=record.fallback_used, no_answer=record.no_answer, reading=record.reading,
        sentence_scores=record.sentence_scores,
    )
