"""Put every golden question through the pipeline: through the topics (a running worker) or in-process."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Sequence
from typing import cast

from ..models import QuestionEvent, ValidatedAnswer
from .sets import GoldenItem

Replies = dict[str, tuple[ValidatedAnswer, float]]
"""Item id → (answer, latency in seconds)."""


def questions_for(items: Sequence[GoldenItem], run_tag: str | None = None) -> dict[str, QuestionEvent]:
    """One question record per item; a fresh run tag keeps request ids unique, so no run reuses an old answer."""
    tag = run_tag or uuid.uuid4().hex[:10]
    return {item.id: QuestionEvent(request_id=f"eval-{tag}-{item.id}", question=item.question, scope=item.scope)
            for item in items}


def run_kafka(items: Sequence[GoldenItem], timeout_s: float | None = None, settings=None,
              reader=None) -> Replies:
    """Publish every question to ``questions`` and collect the ``answers`` by request_id (missing = no reply).

    Only an answer a worker sealed for that very question is scored (``ReplyReader.read_for``): an earlier run's
    sealed answers replayed under this run's keys would otherwise pass the gates for a regressed model. Those passed
    over are counted in ``reader`` and said on stderr; their items score as unanswered."""
    from ..config import get_settings
    from ..ops.client import ReplyReader, ask_many

    settings = settings or get_settings()
    reader = reader or ReplyReader(settings, "answers")
    questions = questions_for(items)
    # every answer costs the relevance model ~1.3 s of both cores on an idle 2-core machine; the wait ends as soon
    # as the last answer arrives, so a generous limit only matters when answers are really missing (a shared
    # machine ran 43 questions past the old 5 s per question in CI)
    timeout_s = timeout_s or max(300.0, 15.0 * len(items))
    replies, latency = ask_many(list(questions.values()), timeout_s=timeout_s, settings=settings, reader=reader)
    if reader.refused or reader.unbound:
        print(f"eval: passed over {reader.refused} answers no worker wrote and {reader.unbound} sealed answers of "
              "other requests under this run's keys; their items score as unanswered", file=sys.stderr)
    answers = cast("dict[str, ValidatedAnswer]", replies)  # the `answers` topic's value model
    return {item_id: (answers[q.request_id], latency[q.request_id])
            for item_id, q in questions.items() if q.request_id in answers}


def run_inprocess(items: Sequence[GoldenItem], deps=None) -> Replies:
    """The same stage functions, called in this process one question at a time."""
    from ..inprocess import answer_inprocess
    from ..deps import get_deps

    deps = deps or get_deps()
    out: Replies = {}
    for item_id, question in questions_for(items).items():
        started = time.monotonic()
        answer = answer_inprocess(question, deps)
        out[item_id] = (answer, time.monotonic() - started)
    return out
