"""Phase C of qa-contract-v1 (``_validate_synthesis``): the reply read as strict JSON, its rows mapped to the selected
facts; and the exception every validation rule raises (``ValidationFailure``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...core.replies import MalformedReply, parse_reply, row_key
from ...core.texts import PROMPT_REFUSAL_LOCK
from ...models.answer import DroppedSentence
from ...models.assembly import AnswerBundle, SelectedEvidence

MAX_SENTENCES = 6
CONFIDENCE_LEVELS = ("High", "Medium", "Low")


class ValidationFailure(Exception):
    """An R5 or Phase C violation; ``code`` is the stable part of ``failure_reason``."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


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


def reply_payload(raw: str) -> object:
    """The reply read as strict JSON (``core.replies.parse_reply``, as Phase B reads one); malformed fails R5."""
    try:
        return parse_reply(raw)
    except MalformedReply as exc:
        raise ValidationFailure("MALFORMED_JSON", str(exc)) from None


def json_wrapped_lock(raw: str) -> bool:
    """JSON mode cannot emit plain text: the exact lock as a JSON string, or as the one value of a one-key object."""
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value == PROMPT_REFUSAL_LOCK
