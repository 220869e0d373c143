"""Post-generation validation (R5) and Phase C synthesis checks; fails closed to the exact refusal.

Grounding rule (deterministic): a sentence is supported by the chunk it cites
when at least ``GROUNDING_MIN_SUPPORT`` of its meaning-bearing terms (stemmed,
stopwords removed, numbers kept verbatim) occur in that chunk, and every number
in the sentence occurs in the chunk.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .models import GenerationRecord, ValidatedAnswer
from .models.answer import AnswerSentence
from .models.assembly import AnswerBundle, SelectedEvidence
from .policy import PROMPT_REFUSAL_LOCK, Policy
from .text import content_terms

CITATION = re.compile(r"\[C\d+\]")
ANY_BRACKET_ANCHOR = re.compile(r"\[\s*c\s*\d+\s*\]", re.IGNORECASE)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
GROUNDING_MIN_SUPPORT = 0.8
MAX_SENTENCES = 6
_META = re.compile(r"\b(?:evidence|as an ai|language model|the provided context|these instructions|chunk_id|"
                   r"knowledge_id)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(if|unless|provided that|only when|only if|depending on|except when|in cases where)\b",
                          re.IGNORECASE)


class ValidationFailure(Exception):
    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


@dataclass(frozen=True)
class AcceptedSentence:
    text: str
    evidence: SelectedEvidence


def validate_synthesis(payload: object, bundle: AnswerBundle) -> list[tuple[str, SelectedEvidence]]:
    """qa-contract-v1 ``_validate_synthesis``: keep rows that map to a selected fact key; drop duplicates."""
    if not isinstance(payload, dict) or not isinstance(payload.get("answer_sentences"), list):
        raise ValidationFailure("SYNTHESIS_NOT_A_LIST", "answer_sentences must be a list")
    by_key = {(e.pdf, e.page, e.chunk_id): e for e in bundle.selected_evidence}
    accepted: list[tuple[str, SelectedEvidence]] = []
    seen: set[tuple[str, int, str]] = set()
    for row in payload["answer_sentences"]:
        if len(accepted) >= MAX_SENTENCES:
            break
        if not isinstance(row, dict):
            continue
        sentence, pdf, page, chunk_id = row.get("sentence"), row.get("pdf"), row.get("page"), row.get("chunk_id")
        if not (isinstance(sentence, str) and sentence.strip() and isinstance(pdf, str) and isinstance(chunk_id, str)
                and isinstance(page, int) and not isinstance(page, bool)):
            continue
        key = (pdf, page, chunk_id)
        if key not in by_key or key in seen:
            continue
        seen.add(key)
        accepted.append((sentence.strip(), by_key[key]))
    return accepted


def normalize_confidence(value: object) -> str:
    return value if value in ("High", "Medium", "Low") else "Low"


def is_grounded(sentence: str, evidence_text: str) -> tuple[bool, float]:
    terms = content_terms(sentence)
    chunk_terms = content_terms(evidence_text)
    support = len(terms & chunk_terms) / len(terms) if terms else 0.0
    numbers_ok = all(n in evidence_text for n in NUMBER.findall(sentence))
    return support >= GROUNDING_MIN_SUPPORT and numbers_ok, support


def check_sentence(sentence: str, evidence: SelectedEvidence, bundle: AnswerBundle) -> tuple[str, float]:
    """R5 checks on one accepted sentence; returns the text without markers and its support."""
    markers = CITATION.findall(sentence)
    if len(ANY_BRACKET_ANCHOR.findall(sentence)) != len(markers):
        raise ValidationFailure("MALFORMED_CITATION", sentence[:80])
    if not markers:
        raise ValidationFailure("UNCITED_SENTENCE", sentence[:80])
    anchors = {m[1:-1] for m in markers}
    if not anchors <= set(bundle.anchor_map):
        raise ValidationFailure("UNKNOWN_ANCHOR", ",".join(sorted(anchors - set(bundle.anchor_map))))
    if evidence.citation_anchor not in anchors:
        raise ValidationFailure("ANCHOR_MISMATCH", f"{evidence.chunk_id} cited as {sorted(anchors)}")
    plain = " ".join(CITATION.sub(" ", sentence).split())
    cited_text = " ".join(bundle.evidence_for(a).sanitized_text for a in sorted(anchors))
    if any(e.chunk_id in plain or e.knowledge_id in plain for e in bundle.selected_evidence):
        raise ValidationFailure("IDS_IN_ANSWER", plain[:80])
    # Meta words are commentary unless the cited source itself says them ("substantial evidence of ...").
    meta = {m.lower() for m in _META.findall(plain)} - {m.lower() for m in _META.findall(cited_text)}
    if meta:
        raise ValidationFailure("META_COMMENTARY", ",".join(sorted(meta)))
    grounded, support = is_grounded(plain, cited_text)
    if not grounded:
        raise ValidationFailure("UNGROUNDED_SENTENCE", f"support {support:.2f} < {GROUNDING_MIN_SUPPORT}: {plain[:80]}")
    return plain, support


def render_answer(sentences: list[AnswerSentence], confidence: str) -> str:
    """Output text contract: ANSWER:, numbered cited sentences, CONFIDENCE: last."""
    lines = ["ANSWER:"]
    lines += [f"{s.n}. {s.text} ({s.pdf}, p{s.page}, {s.chunk_id})" for s in sentences]
    lines.append(f"CONFIDENCE: {confidence}")
    return "\n".join(lines)


def validate(record: GenerationRecord, policy: Policy) -> ValidatedAnswer:
    def refusal(validation_status: str, failure_reason: str | None) -> ValidatedAnswer:
        return ValidatedAnswer(
            **record.carry(), question=record.question, scope=record.scope, status="refused",
            answer_text=policy.refusal_text, classification="REFUSAL", generation_status=record.generation_status,
            validation_status=validation_status, failure_reason=failure_reason, prompt_sha256=record.prompt_sha256,
            fallback_used=record.fallback_used,
        )

    if record.generation_status == "NO_EVIDENCE":
        return refusal("PASSED", None)
    if record.generation_status == "FAILED" or record.llm is None:
        reason = record.answer_bundle.failure_reason or (record.llm.error if record.llm else None) or "generation failed"
        return refusal("FAILED", f"GENERATION_FAILED: {reason}")

    raw = record.llm.raw_model_text.strip()
    if raw == PROMPT_REFUSAL_LOCK:
        return refusal("PASSED", None)
    try:
        try:
            payload = json.loads(raw)
        except ValueError as exc:
            raise ValidationFailure("MALFORMED_JSON", str(exc)) from None
        accepted = validate_synthesis(payload, record.answer_bundle)
        if not accepted:
            raise ValidationFailure("NO_VALID_SENTENCE")
        sentences, supports = [], []
        for n, (sentence, evidence) in enumerate(accepted, start=1):
            plain, support = check_sentence(sentence, evidence, record.answer_bundle)
            supports.append(support)
            sentences.append(AnswerSentence(n=n, text=plain, pdf=evidence.pdf, page=evidence.page,
                                            chunk_id=evidence.chunk_id, anchor=evidence.citation_anchor))
    except ValidationFailure as failure:
        return refusal("FAILED", str(failure))

    confidence = normalize_confidence(payload.get("confidence"))
    conditional = any(_CONDITIONAL.search(s.text) for s in sentences)
    return ValidatedAnswer(
        **record.carry(), question=record.question, scope=record.scope, status="answered",
        answer_text=render_answer(sentences, confidence), sentences=sentences, confidence=confidence,
        classification="CONDITIONAL" if conditional else "DEFINITIVE", generation_status="OK",
        validation_status="PASSED", prompt_sha256=record.prompt_sha256, fallback_used=record.fallback_used,
        grounding_metrics={"min_support": min(supports), "mean_support": sum(supports) / len(supports)},
    )
