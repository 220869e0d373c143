"""The question flow called in-process: ``flow.QUESTION_PATH``'s stage functions, in its order.

Used by `eval --through inprocess` and the benchmarks; the agents run the same rows, so the stream path gives
the same answers (the parity suite checks it). Each output is sealed, and a step whose source is sealed checks its
input's MAC as its agent does (``sealing``). No broker, so no request tracking: a refusal a stage raises
(``RecordRejected``, PROVENANCE_MISMATCH included) propagates to the caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from pydantic import BaseModel

from .deps import Deps
from .flow import QUESTION_PATH, Step
from .models import QuestionEvent, ValidatedAnswer


def run_steps(record: BaseModel, steps: Iterable[Step], deps: Deps) -> BaseModel:
    """``record`` through ``steps``: check the MAC where the agent would, run, seal the output."""
    for step in steps:
        if step.checks_mac:
            deps.sealer.check(record)
        record = deps.sealer.seal(step.run(record, deps))
    return record


def answer_inprocess(question: QuestionEvent, deps: Deps) -> ValidatedAnswer:
    return cast(ValidatedAnswer, run_steps(question, QUESTION_PATH, deps))  # the path ends on `answers` (flow)
