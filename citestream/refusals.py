"""Every refusal of the question path is decided here: its code, the rule that gives it, and the refused answer.

A refused question gets the exact refusal text (``core.texts.REFUSAL_TEXT``, the policy's ``refusal_text``); the
answer's ``refusal_code`` and ``explanation`` say why. The stages call the functions below and decide nothing of
their own; the thresholds are the policy's (``core.policy.RelevancePolicy``: ``backstop``, ``fact_floor``,
``answer_threshold``, each overridable in ``config``). The table of the codes, where each is decided and why:
docs/relevance.md, "Refusals: one table".

* ``WRONG_AUTHORITY`` — :func:`wrong_authority`: the question names a regulator whose documents are not indexed
  (retrieve; what is asked is read by ``qa.retrieve.scope.asked_scope``).
* ``NOT_RELEVANT`` — :func:`not_relevant` (retrieve: no candidate reached the backstop), :func:`below_floor`
  (filter: every fact below the Phase B floor), :func:`no_evidence` (validate: nothing reached the prompt).
* ``FALSE_PREMISE`` — :func:`premise_refusal` (retrieve, through ``verification.premises``: the claim judge finds
  a premise of the question contradicted or not stated); :func:`withheld` takes the facts away.
* ``NOT_ANSWERING`` — :func:`below_answer_threshold` (the extractive backend answers with the prompt's refusal lock
  when no sentence reaches it; validate drops every row below it) and :func:`near_miss` (validate: nothing left
  that answers; the closest source sentence is quoted).

A question the flow cannot finish (a stage error, no outcome in time) gets :func:`failure_answer`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from .core.scrub import scrub
from .core.slots import fills
from .core.texts import REFUSAL_TEXT
from .models import NoAnswer, ValidatedAnswer
from .models.answer import DroppedSentence, RelatedClause
from .models.verdicts import ClaimVerdict

RecordT = TypeVar("RecordT", bound=BaseModel)


# ---------------------------------------------------------------- retrieve


def wrong_authority(reason: str) -> NoAnswer:
    """The question asks about a regulator none of whose documents may answer it (``reason`` says which)."""
    return NoAnswer(code="WRONG_AUTHORITY", detail=reason)


def not_relevant(best: float | None, backstop: float) -> NoAnswer | None:
    """The hard backstop: no candidate's relevance (``best``) reached ``backstop``, so nothing relevant was found."""
    if best is None or best < backstop:
        return NoAnswer(code="NOT_RELEVANT", detail=(
            "no indexed passage is relevant to the question" if best is None else
            f"no indexed passage is relevant to the question (best relevance {best:.2f} < backstop {backstop})"))
    return None


def premise_refusal(premise: str, verdict: ClaimVerdict | None) -> NoAnswer | None:
    """A premise of the question judged as a claim: None when the documents state it (``pass``); otherwise the
    question's refusal, naming the premise and, when contradicted, the sentence that says otherwise. ``verdict``
    None: no passage was found to judge it against. The judge is fail-closed: a premise it cannot find stated is
    not taken for granted."""
    if verdict is None:
        return NoAnswer(code="FALSE_PREMISE", detail=f'the question assumes "{premise}"; no document states it')
    if verdict.verdict == "pass":
        return None
    if verdict.verdict == "fail" and verdict.evidence:
        said = verdict.evidence[0]
        detail = (f'the question assumes "{premise}", which the documents contradict ({said.chunkId}): '
                  f'"{said.quote}"')
    else:
        detail = f'the question assumes "{premise}", which the documents do not state ({verdict.rationale})'
    return NoAnswer(code="FALSE_PREMISE", detail=detail[:1000])


def premise_check_applies(premises: Sequence[str], carried: NoAnswer | None) -> bool:
    """Whether a question's premises are judged (``FALSE_PREMISE``): it states some, and retrieve either found facts or
    found nothing relevant. The judge reads the premise with the question and may score no unit as answering it; a
    premise the documents do not support is then the more telling reason. A question about a regulator with no
    documents (``WRONG_AUTHORITY``) keeps that reason."""
    return bool(premises) and (carried is None or carried.code == "NOT_RELEVANT")


def withheld(record: RecordT, no_answer: NoAnswer) -> RecordT:
    """``record`` (facts on their way) with its facts taken away and the refusal it carries to the answer."""
    return record.model_copy(update={"facts": [], "no_answer": no_answer})


# ---------------------------------------------------------------- filter


def below_floor(kept: Sequence[Any], dropped: Iterable[Any], carried: NoAnswer | None) -> NoAnswer | None:
    """Phase B: nothing kept and a fact dropped below the relevance floor (``NOT_RELEVANT`` drops of the local
    filter) refuse the question, unless an earlier stage already did (``carried``, kept)."""
    if not kept and carried is None and any(d.reason == "NOT_RELEVANT" for d in dropped):
        return NoAnswer(code="NOT_RELEVANT", detail="every retrieved passage is below the relevance floor")
    return carried


# ---------------------------------------------------------------- generate and validate


def below_answer_threshold(score: float, threshold: float) -> bool:
    """A sentence answers the question only when the relevance model scores it at ``threshold`` (the policy's
    ``answer_threshold``) or above. The extractive backend replies with the prompt's refusal lock when no sentence
    does; validate drops every row below it (``NOT_ANSWERING``)."""
    return score < threshold


def no_evidence(carried: NoAnswer | None) -> NoAnswer:
    """Nothing reached the prompt (assembly's NO_EVIDENCE, so no model was called): the refusal an earlier stage
    decided, or ``NOT_RELEVANT``."""
    return carried or NoAnswer(code="NOT_RELEVANT",
                               detail="no retrieved passage passed the relevance and selection gates")


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


def near_miss(clause: RelatedClause | None, threshold: float, slot: str) -> NoAnswer:
    """The model answered nothing, or nothing it wrote answers the question: ``NOT_ANSWERING``, quoting the closest
    source sentence (``clause``) as the explanation."""
    return NoAnswer(code="NOT_ANSWERING", detail=near_miss_detail(clause, threshold, slot))


def refused_answer(common: dict[str, Any], generation_status: Any, refusal_text: str, validation_status: Any,
                   failure_reason: str | None = None, dropped: Iterable[DroppedSentence] = (),
                   no_answer: NoAnswer | None = None, clause: RelatedClause | None = None) -> ValidatedAnswer:
    """The refused answer validate writes: the exact refusal text, and why (``no_answer``) when it was decided
    rather than a failure (``failure_reason``)."""
    return ValidatedAnswer(
        **common, status="refused", answer_text=refusal_text, classification="REFUSAL",
        generation_status=generation_status, validation_status=validation_status,
        failure_reason=failure_reason, dropped_sentences=list(dropped), related_clause=clause,
        explanation=no_answer.detail if no_answer else None, refusal_code=no_answer.code if no_answer else None,
    )


# ---------------------------------------------------------------- a question the flow cannot finish


def failure_answer(request_id: str, question: str, scope: str, reason: str, *, policy_version: str,
                   index_version: str | None = None, trace: list | None = None) -> ValidatedAnswer:
    """The refusal a question gets when it cannot be processed: one outcome on `answers`, never silence. The agents
    (a stage error) and the reconciler (no outcome in time) both send it."""
    return ValidatedAnswer(
        request_id=request_id, policy_version=policy_version, index_version=index_version, trace=list(trace or []),
        question=question, scope=scope, status="refused", answer_text=REFUSAL_TEXT, classification="REFUSAL",
        generation_status="FAILED", validation_status="FAILED", failure_reason=scrub(reason, 500),
    )
