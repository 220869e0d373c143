"""Per-item outcomes and the set's metrics, deterministic from the answers and the cited chunks' text.

Definitions (also in the README (Evaluation)):

* pass, answerable: status ``answered``, at least one cited (pdf, page) is among
  ``expected``, and the answer text itself contains a ``must_contain_any`` phrase
  (letters and digits only, so spacing and hyphenation never decide) — and one
  phrase of every ``must_contain_all`` group. (Until qa-v2 the text of a cited
  chunk counted too: a verbatim neighbour of the fact passed without stating it.)
* pass, unanswerable: ``answer_text`` is exactly the refusal text.
* hallucinated: an answer sentence that :func:`citestream.qa.validate.grounding`
  does not find supported by the chunk it cites, read back from Postgres by
  chunk_id (a cited chunk that does not exist counts as unsupported). The same
  rule the validator applies, re-run independently on the stored chunk, so a
  validator bypass or a citation to the wrong chunk shows up here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import Engine, select

from ..models import REFUSAL_TEXT, ValidatedAnswer
from ..qa.validate import answer_sentences, grounding
from .sets import GoldenItem, contains_phrase

Outcome = Literal["pass", "correct_refusal", "incorrect_refusal", "miscited", "missing_phrase",
                  "answered_unanswerable", "not_exact_refusal", "no_reply"]
RIGHT = frozenset({"pass", "correct_refusal"})
"""The outcomes that handle an item right (``ItemResult.passed``)."""


class ItemResult(BaseModel):
    """What one golden item got, and why it passed or not."""

    model_config = ConfigDict(extra="forbid")

    id: str
    category: str
    answerable: bool
    perturbation: str | None = None
    question: str
    outcome: Outcome
    passed: bool
    status: Literal["answered", "refused", "no_reply"]
    answer_text: str | None = None
    cited: list[str] = Field(default_factory=list, description="'pdf p<page>' of every citation, in order")
    citations_on_expected: int = 0
    matched_phrase: str | None = None
    hallucinated_sentences: list[str] = Field(default_factory=list)
    answering_sentences: int = Field(0, description="Answer sentences the relevance model judged as answering")
    refusal_code: str | None = None
    fallback_used: bool = False
    failure_reason: str | None = None
    latency_s: float | None = None
    confidence: str | None = Field(None, description="The answer's label: High, Medium or Low")
    best_relevance: float | None = Field(None, description="The best answer sentence's relevance score")

    @property
    def hallucinated(self) -> bool:
        return bool(self.hallucinated_sentences)


def best_relevance(answer: ValidatedAnswer) -> float | None:
    """The best answer sentence's judge score (what the confidence label reads); None when no sentence has one."""
    return max((s.relevance for s in answer.sentences if s.relevance is not None), default=None)


def fetch_chunk_texts(engine: Engine, chunk_ids: Sequence[str]) -> dict[str, str]:
    """The stored text of each chunk id that exists."""
    from ..store.tables import chunks

    if not chunk_ids:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(select(chunks.c.chunk_id, chunks.c.text).where(chunks.c.chunk_id.in_(set(chunk_ids))))
        return {row.chunk_id: row.text for row in rows}


def unsupported_sentences(answer: ValidatedAnswer, chunk_texts: Mapping[str, str]) -> list[str]:
    """Every answer sentence the chunk it cites does not support (see the module docstring)."""
    bad = []
    for cited in answer.sentences:
        source = chunk_texts.get(cited.chunk_id)
        for sentence in answer_sentences(cited.text) or [cited.text]:
            if source is None or not grounding(sentence, source).supported:
                bad.append(sentence)
    return bad


def score_item(item: GoldenItem, answer: ValidatedAnswer | None, chunk_texts: Mapping[str, str],
               latency_s: float | None = None) -> ItemResult:
    common = dict(id=item.id, category=item.category, answerable=item.answerable, perturbation=item.perturbation,
                  question=item.question, latency_s=latency_s)
    if answer is None:
        return ItemResult(**common, outcome="no_reply", passed=False, status="no_reply")
    cited = [(s.pdf, s.page) for s in answer.sentences]
    on_expected = sum(ref in item.expected_pages for ref in cited)
    stated = " ".join(s.text for s in answer.sentences)
    matched = contains_phrase(stated, item.must_contain_any) if item.answerable else None
    if matched and not all(contains_phrase(stated, group) for group in item.must_contain_all):
        matched = None
    refused_exactly = answer.answer_text == REFUSAL_TEXT
    if item.answerable:
        if answer.status != "answered" or refused_exactly:
            outcome = "incorrect_refusal"
        elif not on_expected:
            outcome = "miscited"
        elif matched is None:
            outcome = "missing_phrase"
        else:
            outcome = "pass"
    elif refused_exactly:
        outcome = "correct_refusal"
    else:
        outcome = "answered_unanswerable" if answer.status == "answered" else "not_exact_refusal"
    return ItemResult(
        **common, outcome=outcome, passed=outcome in RIGHT, status=answer.status,
        answer_text=answer.answer_text, cited=[f"{pdf} p{page}" for pdf, page in cited],
        citations_on_expected=on_expected, matched_phrase=matched,
        hallucinated_sentences=unsupported_sentences(answer, chunk_texts) if answer.status == "answered" else [],
        fallback_used=answer.fallback_used, failure_reason=answer.failure_reason, refusal_code=answer.refusal_code,
        confidence=answer.confidence,
        best_relevance=best_relevance(answer),
        answering_sentences=sum(1 for s in answer.sentences
                                if s.relevance is not None
                                and s.relevance >= answer.grounding_metrics.get("answer_threshold", 1.0)),
    )


def _rate(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 0.0


def metrics(results: Sequence[ItemResult]) -> dict[str, float | int]:
    """The tracked metrics of qa-contract-v1 §3 plus pass rate and citation precision.

    Denominators: pass rate and fallback rate over every item; incorrect refusal
    and fallback_used_rate_answerable over answerable items; correct refusal over
    unanswerable items; hallucination over answered items; citation precision
    over the citations of answered answerable items. A missing reply is a failed item.
    """
    answerable = [r for r in results if r.answerable]
    unanswerable = [r for r in results if not r.answerable]
    answered = [r for r in results if r.status == "answered"]
    outcomes = Counter(r.outcome for r in results)
    citations = sum(len(r.cited) for r in answerable if r.status == "answered")
    on_expected = sum(r.citations_on_expected for r in answerable if r.status == "answered")
    fallback = sum(r.fallback_used for r in results)
    sentences = sum(len(r.cited) for r in answered)
    latencies = sorted(r.latency_s for r in results if r.latency_s is not None)
    return {
        "items": len(results),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "passed": sum(r.passed for r in results),
        "pass_rate": _rate(sum(r.passed for r in results), len(results)),
        "answerable_pass_rate": _rate(sum(r.passed for r in answerable), len(answerable)),
        "correct_refusal": _rate(outcomes["correct_refusal"], len(unanswerable)),
        "correct_refusal_count": outcomes["correct_refusal"],
        "incorrect_refusal": _rate(outcomes["incorrect_refusal"], len(answerable)),
        "incorrect_refusal_count": outcomes["incorrect_refusal"],
        "hallucination": _rate(sum(r.hallucinated for r in answered), len(answered)),
        "hallucination_count": sum(r.hallucinated for r in answered),
        "citation_precision": _rate(on_expected, citations),
        "answering_share": _rate(sum(r.answering_sentences for r in answered), sentences),
        "citations": citations,
        "phase_a_fallback_used_count": fallback,
        "phase_a_fallback_used_rate": _rate(fallback, len(results)),
        "fallback_used_rate_answerable": _rate(sum(r.fallback_used for r in answerable), len(answerable)),
        "no_reply_count": outcomes["no_reply"],
        "latency_p50_s": round(latencies[len(latencies) // 2], 3) if latencies else 0.0,
    }


def breakdown(results: Sequence[ItemResult], key: str) -> dict[str, dict[str, float | int]]:
    """Items, passes and pass rate per value of ``key`` (``category`` or ``perturbation``)."""
    groups: dict[str, list[ItemResult]] = {}
    for r in results:
        value = getattr(r, key)
        if value is not None:
            groups.setdefault(value, []).append(r)
    return {name: {"items": len(rows), "passed": sum(r.passed for r in rows),
                   "pass_rate": _rate(sum(r.passed for r in rows), len(rows))}
            for name, rows in sorted(groups.items())}
