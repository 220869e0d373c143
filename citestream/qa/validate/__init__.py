"""Post-generation validation: Phase C ``_validate_synthesis`` then R5; any failure is the exact refusal.

Order of work for one model reply:

1. the exact prompt refusal lock → a refusal that PASSED (a near-miss when the
   evidence was related: the closest source sentence is quoted as explanation);
2. strict JSON (duplicate object keys are malformed too);
3. Phase C (qa-contract-v1): ``answer_sentences`` must be a list; rows need a
   str ``sentence``, str ``pdf``, int ``page``, str ``chunk_id``; the key
   ``(pdf, page, chunk_id)`` must be one of the selected facts; duplicate keys
   and rows past the sixth are dropped (and recorded); no row left → refusal;
4. R5 on every accepted row, each failure failing the whole answer closed
   (``validation_status = FAILED``, ``failure_reason = "CODE: detail"``):
   citation markers ``[C\\d+]`` only, from the allowed anchor set, the row's own
   anchor among them; every sentence inside the row cited; no chunk or
   knowledge ids; no prompt-injection echo; no meta commentary; grounded in
   the row's own chunk (see :func:`grounding`);
5. answerability (R5, qa-v2): every row must be judged by the relevance model to answer the question; a row
   that does not is dropped (``NOT_ANSWERING``, with its score) and with none left the answer is the refusal,
   quoting the closest source sentence as the related clause. A verbatim sentence is grounded, not necessarily
   an answer: this holds for every backend.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from ...core.injection import INJECTION
from ...core.replies import MalformedReply, parse_reply, row_key
from ...models import GenerationRecord, ValidatedAnswer
from ...models.answer import AnswerSentence, DroppedSentence, RelatedClause
from ...models.common import NoAnswer
from ...models.assembly import AnswerBundle, SelectedEvidence
from ...core.texts import PROMPT_REFUSAL_LOCK
from ...core.policy import Policy
from ...embedding.batching import split_rows
from ...relevance import carrying_record
from ...core.slots import fills
from ...core.text_units import matching_terms, passage_words, read_units, split_sentences, words

MAX_SENTENCES = 6
GROUNDING_MIN_SUPPORT = 0.8
GROUNDING_WINDOW_SENTENCES = 3
NEGATION_REACH = 4  # words before a verbatim quote that could negate it ("it is not the case that ...")
CONFIDENCE_LEVELS = ("High", "Medium", "Low")

CITATION = re.compile(r"\[C\d+\]")
_LEADING_CITATIONS = re.compile(r"^(?:\s*\[C\d+\])+")
# Anything written like an anchor: [c0], [ C0 ], [C 0], [C0, C1], [C0-C2]. Only the exact form [C0] is allowed.
_ANCHOR_LIKE = re.compile(r"\[\s*c\s*\d+[^\]\n]{0,40}\]", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ID_WORDS = re.compile(r"\b(?:chunk|knowledge)[ _-]?ids?\b|source=|#page=", re.IGNORECASE)
# Instructions a model may echo from a hostile document or user; never an answer, even when quoted.
# Talk about the system, the prompt or the sources instead of the subject. Allowed only as a verbatim quote.
_META = re.compile(
    r"\bevidence\b|\bexcerpts?\b|\bsnippets?\b|\bchunks?\b|\bas an ai\b|\blanguage model\b|\bassistant\b"
    r"|\b(?:these|the above|my) instructions\b|\bthe prompt\b|\bthe question\b"
    r"|\bI (?:cannot|can't|can not|don't|do not|am unable|am not able)\b"
    r"|\b(?:based on|according to|from|in) the (?:provided|given|supplied|above|available|cited) "
    r"(?:context|text|sources?|documents?|information|passages?|materials?)\b"
    r"|\bthe (?:provided|given|supplied) (?:context|text|sources?|documents?|information|passages?|pdfs?)\b",
    re.IGNORECASE,
)
_NEGATION = frozenset({"not", "no", "never", "none", "neither", "nor", "cannot", "without", "nothing", "nowhere"})
_MODALS = frozenset({"must", "shall", "should", "may", "might", "can", "could", "required", "mandatory",
                     "optional", "prohibited", "voluntary"})
_CONDITIONAL = re.compile(
    r"\b(?:if|unless|provided that|only when|only if|depending on|except (?:when|where|for|if)|subject to"
    r"|in (?:cases|the event|circumstances) (?:where|that|of)|as long as|on condition that|contingent on"
    r"|no later than|prior to|within \d+ (?:calendar |business |working )?(?:days?|weeks?|months?|years?|hours?))\b",
    re.IGNORECASE,
)


class ValidationFailure(Exception):
    """An R5 or Phase C violation; ``code`` is the stable part of ``failure_reason``."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


# ---------------------------------------------------------------- Phase C


@dataclass
class Synthesis:
    """What ``_validate_synthesis`` keeps: rows mapped to a selected fact, the normalized confidence, the drops."""

    accepted: list[tuple[str, SelectedEvidence]] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)  # each accepted row's position in answer_sentences
    dropped: list[DroppedSentence] = field(default_factory=list)
    confidence: str = "Low"

    @property
    def refused(self) -> bool:
        """qa-contract-v1: no valid sentence left → ``Not found in provided PDFs``."""
        return not self.accepted


def normalize_confidence(value: object) -> str:
    """``High|Medium|Low`` whatever the case or padding; anything else is ``Low``."""
    if isinstance(value, str):
        for level in CONFIDENCE_LEVELS:
            if value.strip().lower() == level.lower():
                return level
    return "Low"


def _row_key(row: object) -> tuple[str, int, str] | None:
    """A Phase C row's evidence key when the row is valid: a non-empty ``sentence`` and a valid key (``row_key``)."""
    key = row_key(row)
    sentence = row.get("sentence") if isinstance(row, dict) else None
    return key if isinstance(sentence, str) and sentence.strip() else None


def validate_synthesis(payload: object, bundle: AnswerBundle) -> Synthesis:
    """qa-contract-v1 Phase C ``_validate_synthesis``, rule for rule.

    The Phase B keys are the facts that reached the prompt (the bundle's
    selected evidence): a model can only have read those.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("answer_sentences"), list):
        raise ValidationFailure("SYNTHESIS_NOT_A_LIST", "answer_sentences must be a list")
    by_key = {(e.pdf, e.page, e.chunk_id): e for e in bundle.selected_evidence}
    out = Synthesis(confidence=normalize_confidence(payload.get("confidence")))
    seen: set[tuple[str, int, str]] = set()
    for index, row in enumerate(payload["answer_sentences"]):
        key = _row_key(row)
        if key is None:
            out.dropped.append(DroppedSentence(index=index, reason="INVALID_ROW"))
            continue
        if key not in by_key:
            out.dropped.append(DroppedSentence(index=index, reason="UNKNOWN_KEY"))
        elif key in seen:
            out.dropped.append(DroppedSentence(index=index, reason="DUPLICATE_KEY"))
        elif len(out.accepted) >= MAX_SENTENCES:
            out.dropped.append(DroppedSentence(index=index, reason="OVER_MAX_SENTENCES"))
        else:
            seen.add(key)
            out.accepted.append((row["sentence"].strip(), by_key[key]))
            out.indexes.append(index)
    return out



# ---------------------------------------------------------------- R5: one row


def answer_sentences(text: str) -> list[str]:
    """Split a row into sentences; markers written after the full stop ("... 70%. [C0]") stay with their sentence."""
    pieces: list[str] = []
    for piece in split_sentences(text):
        lead = _LEADING_CITATIONS.match(piece)
        if lead and pieces:
            pieces[-1] = f"{pieces[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end():].strip()
        if not piece:
            continue
        if pieces and pieces[-1].endswith(";"):  # a clause, not a sentence
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def _word_seq_in(needle: tuple[str, ...], haystack: tuple[str, ...]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _quoted_from(sentence: str, match: re.Match, source_words: tuple[str, ...]) -> bool:
    """True when the match, with one word either side, is a verbatim word sequence of the source."""
    before = words(sentence[: match.start()])[-1:]
    after = words(sentence[match.end():])[:1]
    return _word_seq_in(tuple(before + words(match.group(0)) + after), source_words)


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _verbatim_unnegated(sentence: str, chunk_text: str) -> bool:
    """The sentence is a verbatim word sequence of the chunk, and none of the four words before it negates it."""
    needle, haystack = tuple(words(sentence)), passage_words(chunk_text)
    n = len(needle)
    return any(haystack[i:i + n] == needle and not set(haystack[max(0, i - NEGATION_REACH):i]) & _NEGATION
               for i in range(len(haystack) - n + 1))


@dataclass(frozen=True)
class Grounding:
    supported: bool
    support: float
    reason: str = ""


def grounding(sentence: str, chunk_text: str) -> Grounding:
    """Is ``sentence`` supported by ``chunk_text``? Deterministic, and the rule is the documentation:

    A verbatim quote (the sentence's words, in order, somewhere in the chunk)
    is supported unless one of the ``NEGATION_REACH`` words just before it is
    a negation. Otherwise, take every window of 1 to ``GROUNDING_WINDOW_SENTENCES`` consecutive
    sentences of the chunk; the best window is the one holding the largest
    share of the sentence's content terms (stemmed, stopwords removed). The
    sentence is supported when, in that window,

    * at least ``GROUNDING_MIN_SUPPORT`` (0.8) of its content terms occur,
    * every number it states occurs (``1,000`` = ``1000``),
    * every negation (not, no, never, without, ...) and modal (must, may,
      should, required, ...) it uses occurs, and
    * if the single best-matching source sentence is negated, so is it.
    """
    terms = matching_terms(sentence)
    if not terms:
        return Grounding(False, 0.0, "no content terms")
    if _verbatim_unnegated(sentence, chunk_text):
        return Grounding(True, 1.0)
    source = split_sentences(chunk_text) or [chunk_text]
    best_support, best_window = -1.0, ""
    best_single_support, best_single = -1.0, ""
    for size in range(1, GROUNDING_WINDOW_SENTENCES + 1):
        for start in range(max(1, len(source) - size + 1)):
            window = " ".join(source[start:start + size])
            support = len(terms & matching_terms(window)) / len(terms)
            if support > best_support:
                best_support, best_window = support, window
            if size == 1 and support > best_single_support:
                best_single_support, best_single = support, window
    if best_support < GROUNDING_MIN_SUPPORT:
        missing = sorted(terms - matching_terms(best_window))[:5]
        return Grounding(False, best_support,
                         f"support {best_support:.2f} < {GROUNDING_MIN_SUPPORT} (missing {missing})")
    missing_numbers = _numbers(sentence) - _numbers(best_window)
    if missing_numbers:
        return Grounding(False, best_support, f"numbers not in source {sorted(missing_numbers)}")
    sentence_words, window_words = set(words(sentence)), set(words(best_window))
    missing_cues = (sentence_words & (_NEGATION | _MODALS)) - window_words
    if missing_cues:
        return Grounding(False, best_support, f"negation/modal not in source {sorted(missing_cues)}")
    if (best_single_support >= GROUNDING_MIN_SUPPORT and set(words(best_single)) & _NEGATION
            and not sentence_words & _NEGATION):
        return Grounding(False, best_support, "source sentence is negated, answer is not")
    return Grounding(True, best_support)


def check_row(sentence: str, evidence: SelectedEvidence, bundle: AnswerBundle) -> tuple[str, float]:
    """R5 on one accepted row; returns its text without markers and its lowest grounding support."""
    markers = CITATION.findall(sentence)
    malformed = [m for m in _ANCHOR_LIKE.findall(sentence) if not CITATION.fullmatch(m)]
    if malformed:
        raise ValidationFailure("MALFORMED_CITATION", ", ".join(malformed[:3]))
    if not markers:
        raise ValidationFailure("UNCITED_SENTENCE", sentence[:80])
    unknown = sorted({m[1:-1] for m in markers} - set(bundle.anchor_map))
    if unknown:
        raise ValidationFailure("UNKNOWN_ANCHOR", ", ".join(unknown))
    if f"[{evidence.citation_anchor}]" not in markers:
        raise ValidationFailure("ANCHOR_MISMATCH", f"row for {evidence.citation_anchor} cites {sorted(set(markers))}")
    plain = _without_markers(sentence)
    supports = []
    for part in answer_sentences(sentence):
        text = _without_markers(part)
        _check_wording(text, bundle, evidence)  # per sentence: "word before" never spans two sentences
        if not CITATION.search(part):
            raise ValidationFailure("UNCITED_SENTENCE", part[:80])
        result = grounding(text, evidence.sanitized_text)
        if not result.supported:
            raise ValidationFailure("UNGROUNDED_SENTENCE", f"{result.reason}: {text[:80]}")
        supports.append(result.support)
    return plain, min(supports)


def _without_markers(text: str) -> str:
    plain = " ".join(CITATION.sub(" ", text).split())
    return re.sub(r" ([.,;:!?])", r"\1", plain)  # one space at most: ``plain``'s spaces are single


def _check_wording(plain: str, bundle: AnswerBundle, evidence: SelectedEvidence) -> None:
    """No ids, no injection echo, no meta commentary (unless quoted verbatim from the cited chunk)."""
    lowered = plain.lower()
    ids = {e.chunk_id for e in bundle.selected_evidence} | {e.knowledge_id for e in bundle.selected_evidence}
    # the substring test first: an id is rarely there, and its pattern would be compiled anew for every id
    leaked = sorted(i for i in ids if i.lower() in lowered
                    and re.search(rf"(?<![\w-]){re.escape(i.lower())}(?![\w-])", lowered))
    id_word = _ID_WORDS.search(plain)
    if leaked or id_word:
        raise ValidationFailure("IDS_IN_ANSWER", ", ".join(leaked) or (id_word.group(0) if id_word else ""))
    injection = INJECTION.search(plain)
    if injection:
        raise ValidationFailure("INJECTION_ECHO", injection.group(0)[:60])
    source_words = passage_words(evidence.sanitized_text)
    for match in _META.finditer(plain):
        if not _quoted_from(plain, match, source_words):
            raise ValidationFailure("META_COMMENTARY", match.group(0))


# ---------------------------------------------------------------- output contract and classification


def render_answer(sentences: list[AnswerSentence], confidence: str) -> str:
    """Output text contract: ``ANSWER:``, numbered sentences ending ``(pdf, p<page>, <chunk_id>)``, ``CONFIDENCE:``."""
    lines = ["ANSWER:"]
    lines += [f"{s.n}. {s.text} ({s.pdf}, p{s.page}, {s.chunk_id})" for s in sentences]
    lines.append(f"CONFIDENCE: {confidence}")
    return "\n".join(lines)


def classify(sentences: list[AnswerSentence]) -> str:
    """DEFINITIVE unless an accepted sentence states a contingency, condition or deadline (CONDITIONAL)."""
    return "CONDITIONAL" if any(_CONDITIONAL.search(s.text) for s in sentences) else "DEFINITIVE"


def related_clause(question: str, bundle: AnswerBundle, relevance) -> RelatedClause | None:
    """The quotable source unit the relevance model scores highest for the question (ties: evidence order), if
    any, read as every stage reads it (``text.read_units``)."""
    units = [(unit, e) for e in bundle.selected_evidence for unit in read_units(e.sanitized_text)]
    if relevance is None or not units:
        return None
    flat = relevance.score(question, [r for u, _ in units for r in u.readings])
    scores = [part.max() for part in split_rows(flat, [len(u.readings) for u, _ in units])]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    unit, evidence = units[best]
    return RelatedClause(text=unit.quote, pdf=evidence.pdf, page=evidence.page, chunk_id=evidence.chunk_id,
                         relevance=round(float(scores[best]), 4))


def near_miss_detail(clause: RelatedClause | None, threshold: float, slot: str) -> str:
    """Why the closest passage does not answer: it scores below the threshold, or it lacks the value asked for."""
    if clause is None:
        return "no sentence of the evidence answers the question"
    where = f"the closest passage ({clause.pdf}, p{clause.page}, {clause.chunk_id})"
    if clause.relevance is not None and clause.relevance >= threshold and not fills(slot, clause.text):
        return (f"{where} is related but states no {slot.replace('_', ' ')}, which the question asks for: "
                f"\"{clause.text}\"")
    return (f"{where} is related but does not answer the question (relevance {clause.relevance or 0:.2f} < "
            f"{threshold}): \"{clause.text}\"")


def row_readings(plain: str, evidence: SelectedEvidence) -> list[str]:
    """What the relevance model reads for an accepted row: the units of its chunk it quotes, as every stage reads
    them (a unit after its subject, ``text.read_units``); the row itself when it quotes none whole (a model that
    writes its own words). A row answers when one of them does."""
    return [r for u in read_units(evidence.sanitized_text) if u.quote in plain for r in u.readings] or [plain]


def reply_payload(raw: str) -> object:
    """The reply read as strict JSON (``core.replies.parse_reply``, as Phase B reads one); malformed fails R5."""
    try:
        return parse_reply(raw)
    except MalformedReply as exc:
        raise ValidationFailure("MALFORMED_JSON", str(exc)) from None


def _json_wrapped_lock(raw: str) -> bool:
    """JSON mode cannot emit plain text: the exact lock as a JSON string, or as the one value of a one-key object."""
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value == PROMPT_REFUSAL_LOCK


# ---------------------------------------------------------------- the stage


def validate(record: GenerationRecord, policy: Policy, relevance=None) -> ValidatedAnswer:
    """R5 + Phase C for one generation; never raises for anything the model wrote.

    ``relevance`` is the relevance model; the stage always passes it, and it reads the sentence scores the record
    carries (``relevance.carried``). Without it (unit tests of the other rules) the answerability check is skipped.
    """
    with carrying_record(record.sentence_scores):
        return _validate(record, policy, relevance)


def _validate(record: GenerationRecord, policy: Policy, relevance) -> ValidatedAnswer:
    common = dict(**record.carry(), question=record.question, scope=record.scope, reading=record.reading,
                  prompt_sha256=record.prompt_sha256, fallback_used=record.fallback_used)
    threshold = policy.relevance.answer_threshold
    asked = record.reading.asked if record.reading else record.question  # what every relevance decision scores
    slot = record.reading.slot if record.reading else "open"

    def refusal(validation_status: str, failure_reason: str | None, dropped=(), no_answer: NoAnswer | None = None,
                near_miss: bool = False):
        clause = related_clause(asked, record.answer_bundle, relevance) if near_miss else None
        if near_miss:
            no_answer = NoAnswer(code="NOT_ANSWERING", detail=near_miss_detail(clause, threshold, slot))
        return ValidatedAnswer(
            **common, status="refused", answer_text=policy.refusal_text, classification="REFUSAL",
            generation_status=record.generation_status, validation_status=validation_status,
            failure_reason=failure_reason, dropped_sentences=list(dropped), related_clause=clause,
            explanation=no_answer.detail if no_answer else None, refusal_code=no_answer.code if no_answer else None,
        )

    if record.generation_status == "NO_EVIDENCE":
        return refusal("PASSED", None, no_answer=record.no_answer or NoAnswer(
            code="NOT_RELEVANT", detail="no retrieved passage passed the relevance and selection gates"))
    if record.generation_status == "FAILED" or record.llm is None:
        reason = (record.answer_bundle.failure_reason or (record.llm.error if record.llm else None)
                  or "generation failed")
        return refusal("FAILED", f"GENERATION_FAILED: {reason}")

    raw = record.llm.raw_model_text
    if raw.strip() == PROMPT_REFUSAL_LOCK or _json_wrapped_lock(raw):
        return refusal("PASSED", None, near_miss=True)
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
                return refusal("PASSED", None, near_miss=True)
            raise ValidationFailure("NO_VALID_SENTENCE", f"{len(synthesis.dropped)} rows dropped")
        checked = [(index, evidence, *check_row(sentence, evidence, record.answer_bundle))
                   for index, (sentence, evidence) in zip(synthesis.indexes, synthesis.accepted)]
    except ValidationFailure as failure:
        return refusal("FAILED", str(failure), synthesis.dropped)

    dropped = list(synthesis.dropped)
    scores: list[float | None] = [None] * len(checked)
    if relevance is not None:
        readings = [row_readings(plain, evidence) for _, evidence, plain, _ in checked]
        flat = relevance.score(asked, [r for row in readings for r in row])
        scores = [float(part.max()) for part in split_rows(flat, [len(row) for row in readings])]
    sentences: list[AnswerSentence] = []
    for (index, evidence, plain, support), score in zip(checked, scores):
        if score is not None and score < threshold:
            dropped.append(DroppedSentence(index=index, reason="NOT_ANSWERING", relevance=round(float(score), 4)))
            continue
        if not fills(slot, plain):  # on the topic, but without the value asked for: a near miss
            dropped.append(DroppedSentence(index=index, reason="SLOT_NOT_FILLED",
                                           relevance=None if score is None else round(float(score), 4)))
            continue
        sentences.append(AnswerSentence(n=len(sentences) + 1, text=plain, pdf=evidence.pdf, page=evidence.page,
                                        chunk_id=evidence.chunk_id, anchor=evidence.citation_anchor,
                                        support=round(support, 4),
                                        relevance=None if score is None else round(float(score), 4)))
    if not sentences:
        return refusal("PASSED", None, dropped, near_miss=True)

    supports = [s.support for s in sentences if s.support is not None]  # set on every sentence above
    metrics = {"min_support": min(supports), "mean_support": round(sum(supports) / len(supports), 4),
               "threshold": GROUNDING_MIN_SUPPORT, "sentences": float(len(sentences))}
    if relevance is not None:
        metrics |= {"min_relevance": min(s.relevance for s in sentences if s.relevance is not None),
                    "answer_threshold": threshold}
    return ValidatedAnswer(
        **common, status="answered", answer_text=render_answer(sentences, synthesis.confidence), sentences=sentences,
        confidence=synthesis.confidence, classification=classify(sentences), generation_status="OK",
        validation_status="PASSED", dropped_sentences=dropped, grounding_metrics=metrics,
    )
