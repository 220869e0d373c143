"""The question flow called in-process: ``flow.QUESTION_PATH``'s stage functions, in its order.

Used by `eval --through inprocess` and the benchmarks; the agents run the same rows, so the stream path gives
the same answers (the parity suite checks it). Each output is sealed and each step that checks a MAC on the stream
path checks it here too (``sealing``). No broker, so no request tracking: a refusal a stage raises
(``RecordRejected``, PROVENANCE_MISMATCH included) propagates to the caller.
"""

from __future__ import annotations

from typing import cast

from pydantic import BaseModel

from .deps import Deps
from .flow import QUESTION_PATH
from .models import QuestionEvent, ValidatedAnswer


def answer_inprocess(question: QuestionEvent, deps: Deps) -> ValidatedAnswer:
    record: BaseModel = question
    for step in QUESTION_PATH:
        if step.checks_mac:
            deps.sealer.check(record)
        record = deps.sealer.seal(step.run(record, deps))
    return cast(ValidatedAnswer, record)  # the path ends on `answers` (checked by flow)
