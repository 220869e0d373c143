"""The validate stage: R5 + Phase C for one generation, in the order the package docstring gives."""

from __future__ import annotations

from typing import Any, cast

from ...core.policy import Policy
from ...core.question_parts import part_slots
from ...core.slots import fills
from ...core.texts import PROMPT_REFUSAL_LOCK
from ...embedding.batching import split_rows
from ...core.text_units import read_units
from ...models import GenerationRecord, ValidatedAnswer
from ...models.common import SentenceScores, reading_key
from ...models.answer import AnswerSentence, DroppedSentence
from ...refusals import below_answer_threshold, near_miss, no_evidence, refused_answer
from ...relevance import carrying_record
from .answer_text import classify, render_answer
from .answerability import related_clause, row_readings
from .grounding_check import GROUNDING_MIN_SUPPORT
from .rows import check_row
from .synthesis import Synthesis, ValidationFailure, json_wrapped_lock, reply_payload, validate_synthesis


def validate(record: GenerationRecord, policy: Policy, relevance=None, second=None) -> ValidatedAnswer:
    """R5 + Phase C for one generation; never raises for anything the model wrote.

    ``relevance`` is the relevance model; the stage always passes it, and it reads the sentence scores the record
    carries (``relevance.carried``). Without it (unit tests of the other rules) the answerability check is skipped.
    ``second`` is the second judge the High label asks (``confidence_label``); the stage passes the claim judge's
    cross-encoder.
    """
    with carrying_record(record.sentence_scores):
        return _validate(record, policy, relevance, second)


_LEVELS = ("Low", "Medium", "High")


def runner_up(scores: SentenceScores | None, bundle, cited: set[str]) -> float | None:
    """The best carried score of a unit in an evidence block the answer does not cite: how close another passage
    came. None when the record carries no scores or every block is cited."""
    if scores is None:
        return None
    carried = scores.scores
    values = [carried[k] for e in bundle.selected_evidence if e.chunk_id not in cited
              for u in read_units(e.sanitized_text) for r in u.readings if (k := reading_key(r)) in carried]
    return max(values, default=None)


def confidence_label(sentences: list[AnswerSentence], stated: str, policy, other: float | None = None,
                     background: bool = False, agreement: float | None = None) -> str:
    """The answer's label, a promise to the reader: High when its best sentence's relevance score reaches
    ``high_confidence``, no passage it does not cite (``other``) comes within ``high_margin`` of it, the second
    judge (``agreement``: its best score for the answer's sentences) reaches ``high_agreement``, and the question
    came without ``background``; else Medium. All chosen on dev so that High answers are right at least nine times
    in ten by the Wilson bound (docs/relevance.md, "Confidence"): two judges trained apart are wrong together less often
    than one alone, and the judge scores the asking sentence alone, so its score says nothing of whether the
    asker's situation changes the answer. The model's own label may lower it, never raise it; with no score (no
    relevance model) the model's label stands; with no second judge its condition is not asked."""
    scores = [s.relevance for s in sentences if s.relevance is not None]
    if not scores:
        return stated
    best = max(scores)
    clear = other is None or best - other >= policy.high_margin
    agreed = agreement is None or agreement >= policy.high_agreement
    measured = "High" if best >= policy.high_confidence and clear and agreed and not background else "Medium"
    return min(measured, stated, key=_LEVELS.index) if stated in _LEVELS else measured


def second_opinion(second, asked: str, sentences: list[AnswerSentence], policy) -> float | None:
    """The second judge's best score for the answer's sentences, asked only when the first judge's would make the
    answer High (one pass of a sentence or two); None without a second judge."""
    scores = [s.relevance for s in sentences if s.relevance is not None]
    if second is None or not scores or max(scores) < policy.high_confidence:
        return None
    return float(max(second.score(asked, [s.text for s in sentences])))


def _validate(record: GenerationRecord, policy: Policy, relevance, second) -> ValidatedAnswer:
    common = dict(**record.carry(), question=record.question, scope=record.scope, reading=record.reading,
                  prompt_sha256=record.prompt_sha256, fallback_used=record.fallback_used)
    asked = record.reading.asked if record.reading else record.question  # what every relevance decision scores
    slot = record.reading.slot if record.reading else "open"
    slots = part_slots(record.reading.asking()) if record.reading else (slot,)  # each part's ("which tests, …")
    threshold = policy.relevance.threshold_for(slots, record.reading is not None and record.reading.read_whole())

    def failed(failure_reason: str, dropped=()) -> ValidatedAnswer:
        return refused_answer(common, record.generation_status, policy.refusal_text, "FAILED", failure_reason, dropped)

    def nothing_answers(dropped=()) -> ValidatedAnswer:
        clause = related_clause(asked, record.answer_bundle, relevance)
        return refused_answer(common, record.generation_status, policy.refusal_text, "PASSED", None, dropped,
                              near_miss(clause, threshold, slot), clause)

    if record.generation_status == "NO_EVIDENCE":
        return refused_answer(common, record.generation_status, policy.refusal_text, "PASSED",
                              no_answer=no_evidence(record.no_answer))
    if record.generation_status == "FAILED" or record.llm is None:
        reason = (record.answer_bundle.failure_reason or (record.llm.error if record.llm else None)
                  or "generation failed")
        return failed(f"GENERATION_FAILED: {reason}")

    raw = record.llm.raw_model_text
    if raw.strip() == PROMPT_REFUSAL_LOCK or json_wrapped_lock(raw):
        return nothing_answers()
    synthesis = Synthesis()
    try:
        if PROMPT_REFUSAL_LOCK in raw or (policy.refusal_text in raw and not raw.lstrip().startswith(("{", "`"))):
            raise ValidationFailure("REFUSAL_NOT_EXACT", "refusal text with other text around it")
        try:
            payload = reply_payload(raw)
        except ValidationFailure as failure:
            if record.llm.finish_reason == "length":
                raise ValidationFailure("TRUNCATED_OUTPUT", "finish_reason=length") from None
            raise failure
        synthesis = validate_synthesis(payload, record.answer_bundle)
        if synthesis.refused:
            # the model answered "nothing" in JSON: a refusal, not a fault (validate_synthesis returned, so
            # payload is a dict with a list under answer_sentences)
            if not cast("dict[str, Any]", payload)["answer_sentences"]:
                return nothing_answers()
            raise ValidationFailure("NO_VALID_SENTENCE", f"{len(synthesis.dropped)} rows dropped")
        checked = [(index, evidence, *check_row(sentence, evidence, record.answer_bundle))
                   for index, (sentence, evidence) in zip(synthesis.indexes, synthesis.accepted)]
    except ValidationFailure as failure:
        return failed(str(failure), synthesis.dropped)

    dropped = list(synthesis.dropped)
    scores: list[float | None] = [None] * len(checked)
    if relevance is not None:
        readings = [row_readings(plain, evidence) for _, evidence, plain, _ in checked]
        flat = relevance.score(asked, [r for row in readings for r in row])
        scores = [float(part.max()) for part in split_rows(flat, [len(row) for row in readings])]
    sentences: list[AnswerSentence] = []
    for (index, evidence, plain, support), score in zip(checked, scores):
        if score is not None and below_answer_threshold(score, threshold):
            dropped.append(DroppedSentence(index=index, reason="NOT_ANSWERING", relevance=round(float(score), 4)))
            continue
        if not any(fills(s, plain) for s in slots):  # on the topic, without the value asked for: a near miss
            dropped.append(DroppedSentence(index=index, reason="SLOT_NOT_FILLED",
                                           relevance=None if score is None else round(float(score), 4)))
            continue
        sentences.append(AnswerSentence(n=len(sentences) + 1, text=plain, pdf=evidence.pdf, page=evidence.page,
                                        chunk_id=evidence.chunk_id, anchor=evidence.citation_anchor,
                                        support=round(support, 4),
                                        relevance=None if score is None else round(float(score), 4)))
    if not sentences:
        return nothing_answers(dropped)

    supports = [s.support for s in sentences if s.support is not None]  # set on every sentence above
    metrics = {"min_support": min(supports), "mean_support": round(sum(supports) / len(supports), 4),
               "threshold": GROUNDING_MIN_SUPPORT, "sentences": float(len(sentences))}
    if relevance is not None:
        metrics |= {"min_relevance": min(s.relevance for s in sentences if s.relevance is not None),
                    "answer_threshold": threshold}
    other = runner_up(record.sentence_scores, record.answer_bundle, {s.chunk_id for s in sentences})
    background = bool(record.reading and record.reading.background.strip())
    agreement = None if background else second_opinion(second, asked, sentences, policy.relevance)
    confidence = confidence_label(sentences, synthesis.confidence, policy.relevance, other, background, agreement)
    return ValidatedAnswer(
        **common, status="answered", answer_text=render_answer(sentences, confidence), sentences=sentences,
        confidence=confidence, classification=classify(sentences), generation_status="OK",
        validation_status="PASSED", dropped_sentences=dropped, grounding_metrics=metrics,
    )
