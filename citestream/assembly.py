"""R2 answer assembly: retrieval_bundle → AnswerBundle → frozen prompt (answer-assembly-contract R2.0–R2.6)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from pydantic import ValidationError

from .models import AnswerBundle, PromptBuildResult, PromptRecord, RelevantFactsRecord, RetrievalResult
from .models.assembly import AssemblyMetrics, AssemblyTrace, DropRecord, SelectedEvidence
from .policy import Policy
from .prompt import TEMPLATE_VERSION, count_prompt_tokens, render_prompt, sha256_hex
from .text import words

TokenCount = Callable[[str], int]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def sanitize(text: str) -> str:
    """safe_normalize_v1: drop null bytes and control characters, collapse whitespace. Never rewrites words."""
    text = text.replace("\x00", "")
    text = "".join(" " if unicodedata.category(c) == "Zs" else c for c in text)
    text = _CONTROL.sub(" ", text)
    return " ".join(text.split())


def overlap_ratio(a: str, b: str) -> float:
    """Share of the smaller text's word multiset found in the other."""
    ca, cb = Counter(words(a)), Counter(words(b))
    smaller = min(sum(ca.values()), sum(cb.values()))
    return sum((ca & cb).values()) / smaller if smaller else 0.0


def render_evidence(selected: Sequence[SelectedEvidence]) -> str:
    """R2.5: the frozen evidence format, one block per chunk in anchor order."""
    return "\n".join(
        f"[{e.citation_anchor} | chunk_id={e.chunk_id} | knowledge_id={e.knowledge_id} | source={e.source}]\n"
        f"{e.sanitized_text}"
        for e in selected
    )


def bundle_from_facts(record: RelevantFactsRecord) -> list[RetrievalResult]:
    """Phase B facts as the R2.0A retrieval_bundle: rank is the fact's position (0 = best)."""
    return [
        RetrievalResult(chunk_id=f.chunk_id, knowledge_id=f.doc_id, chunk_text=f.quote, rank=i,
                        similarity_score=f.score, pdf=f.pdf, page=f.page)
        for i, f in enumerate(record.facts)
    ]


def _input_violation(rows: Sequence[RetrievalResult]) -> str | None:
    ranks = [r.rank for r in rows]
    if ranks and (ranks[0] != 0 or any(b <= a for a, b in zip(ranks, ranks[1:]))):
        return "rank must start at 0 and strictly increase"
    if len({r.chunk_id for r in rows}) != len(rows):
        return "duplicate chunk_id in retrieval_bundle"
    return None


def select_evidence(
    request_id: str, rows: Sequence[RetrievalResult], policy: Policy, count: TokenCount, trace: AssemblyTrace,
    question: str,
) -> tuple[AnswerBundle, PromptBuildResult]:
    sp = policy.selection
    drops: list[DropRecord] = []
    failed = _input_violation(rows)
    if failed:
        return _failed(request_id, rows, trace, failed)

    candidates: list[tuple[RetrievalResult, str]] = []
    for row in sorted(rows, key=lambda r: (r.rank, r.chunk_id)):  # rank_strict, chunk_id tie-break
        text = sanitize(row.chunk_text)
        if not text:
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_EMPTY_AFTER_SANITIZE"))
        elif row.similarity_score < sp.min_similarity:
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_BELOW_SIMILARITY_FLOOR"))
        elif any(overlap_ratio(text, kept) >= sp.overlap_ratio_threshold for _, kept in candidates):
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_DUP"))
        else:
            candidates.append((row, text))

    per_knowledge: Counter[str] = Counter()
    capped: list[tuple[RetrievalResult, str]] = []
    for row, text in candidates:  # best-ranked chunks of each document are kept first, up to the cap
        if per_knowledge[row.knowledge_id] >= sp.max_chunks_per_knowledge_id:
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_PER_KNOWLEDGE_CAP"))
        elif len(capped) >= sp.max_chunks:
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_MAX_CHUNKS"))
        else:
            per_knowledge[row.knowledge_id] += 1
            capped.append((row, text))

    chunk_cap = int(sp.max_chunk_token_ratio * sp.max_evidence_tokens)
    truncated = False
    budgeted: list[tuple[RetrievalResult, str]] = []
    used = 0
    for row, text in capped:
        if count(text) > chunk_cap:
            text, truncated = _truncate_to(text, chunk_cap, count), True
        cost = count(text)
        if used + cost > sp.max_evidence_tokens:
            drops.append(DropRecord(chunk_id=row.chunk_id, code="DROP_BUDGET"))
            continue
        used += cost
        budgeted.append((row, text))

    # PB4: drop the lowest-ranked chunk until the whole prompt fits, rebuilding each time.
    while True:
        selected = [
            SelectedEvidence(chunk_id=row.chunk_id, knowledge_id=row.knowledge_id, rank=row.rank,
                             similarity_score=row.similarity_score, citation_anchor=f"C{i}", sanitized_text=text,
                             pdf=row.pdf, page=row.page)
            for i, (row, text) in enumerate(budgeted)
        ]
        block = render_evidence(selected)
        tokens = count_prompt_tokens(block, question, sp.reserved_output_tokens, count)
        if not budgeted or tokens.total_prompt_tokens <= sp.max_total_prompt_tokens:
            break
        dropped_row, _ = budgeted.pop()
        drops.append(DropRecord(chunk_id=dropped_row.chunk_id, code="DROP_BUDGET"))

    codes = Counter(d.code for d in drops)
    metrics = AssemblyMetrics(
        retrieved_k=len(rows), selected_k=len(selected), dedup_dropped_count=codes["DROP_DUP"],
        budget_dropped_count=codes["DROP_BUDGET"], per_knowledge_cap_dropped_count=codes["DROP_PER_KNOWLEDGE_CAP"],
        empty_dropped_count=codes["DROP_EMPTY_AFTER_SANITIZE"],
        below_floor_dropped_count=codes["DROP_BELOW_SIMILARITY_FLOOR"],
        evidence_token_count=tokens.evidence_tokens if selected else 0, truncation_applied=truncated, drops=drops,
    )
    if not selected:
        bundle = AnswerBundle(request_id=request_id, assembly_status="NO_EVIDENCE", trace=trace,
                              assembly_metrics=metrics)
        return bundle, PromptBuildResult(build_status="NO_EVIDENCE", template_version=TEMPLATE_VERSION)

    bundle = AnswerBundle(
        request_id=request_id, assembly_status="OK", selected_evidence=selected, evidence_block_text=block,
        anchor_map={e.citation_anchor: e.chunk_id for e in selected}, trace=trace, assembly_metrics=metrics,
    )
    prompt_text = render_prompt(block, question)
    return bundle, PromptBuildResult(build_status="OK", template_version=TEMPLATE_VERSION, prompt_text=prompt_text,
                                     prompt_sha256=sha256_hex(prompt_text), tokens=tokens)


def _truncate_to(text: str, limit: int, count: TokenCount) -> str:
    """Cut a chunk to ``limit`` tokens at a word boundary (the per-chunk cap), never rewording it."""
    cut = text.split(" ")
    while cut and count(" ".join(cut)) > limit:
        cut = cut[: max(1, int(len(cut) * 0.9))] if len(cut) > 1 else []
    return " ".join(cut)


def _failed(request_id, rows, trace, reason) -> tuple[AnswerBundle, PromptBuildResult]:
    bundle = AnswerBundle(request_id=request_id, assembly_status="FAILED", trace=trace,
                          assembly_metrics=AssemblyMetrics(retrieved_k=len(rows), selected_k=0),
                          failure_reason=reason)
    return bundle, PromptBuildResult(build_status="FAILED", template_version=TEMPLATE_VERSION, failure_reason=reason)


def assemble(record: RelevantFactsRecord, policy: Policy, count: TokenCount, tokenizer_name: str,
             embedding_model: str) -> PromptRecord:
    trace = AssemblyTrace(
        index_version=record.index_version or "idx-0", policy_version=policy.version,
        embedding_model=embedding_model, tokenizer=tokenizer_name, retrieval_top_k=record.top_k,
        thresholds=policy.thresholds(),
    )
    try:
        rows = bundle_from_facts(record)
    except ValidationError as exc:
        bundle, prompt = _failed(record.request_id, [], trace, f"retrieval_bundle invalid: {exc.errors()[0]['msg']}")
    else:
        bundle, prompt = select_evidence(record.request_id, rows, policy, count, trace, record.question)
    return PromptRecord(
        **record.carry(), question=record.question, scope=record.scope, answer_bundle=bundle, prompt=prompt,
        fallback_used=record.fallback_used,
    )
