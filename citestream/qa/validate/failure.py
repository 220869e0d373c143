"""The failure answer: a question the flow cannot finish still gets one outcome on `answers`, the exact refusal.

Here because it is an answer like the ones validate writes; the agents (a stage error) and the reconciler (no outcome
in time) both send it.
"""

from __future__ import annotations

from ...core.texts import REFUSAL_TEXT
from ...models import ValidatedAnswer
from ...core.scrub import scrub


def failure_answer(request_id: str, question: str, scope: str, reason: str, *, policy_version: str,
                   index_version: str | None = None, trace: list | None = None) -> ValidatedAnswer:
    """The refusal a question gets when it cannot be processed: one outcome on `answers`, never silence."""
    return ValidatedAnswer(
        request_id=request_id, policy_version=policy_version, index_version=index_version, trace=list(trace or []),
        question=question, scope=scope, status="refused", answer_text=REFUSAL_TEXT, classification="REFUSAL",
        generation_status="FAILED", validation_status="FAILED", failure_reason=scrub(reason, 500),
    )
