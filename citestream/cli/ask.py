"""``citestream ask``: publish questions and print their validated answers."""

from __future__ import annotations

import uuid
from typing import cast

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("ask", help="publish questions and print their validated answers")
    p.add_argument("question", nargs="+")
    p.add_argument("--scope", default="MIXED", choices=["MIXED", "FDA", "EMA", "ICH", "SOPS"])
    p.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(fn=cmd_ask)


def cmd_ask(args) -> int:
    from ..ops.client import ReplyReader, ask_many
    from ..models import QuestionEvent, ValidatedAnswer

    questions = [QuestionEvent(request_id=f"ask-{uuid.uuid4().hex[:12]}", question=q, scope=args.scope)
                 for q in args.question]
    reader = ReplyReader(get_settings(), "answers")  # only answers a worker sealed are printed
    replies, latency = ask_many(questions, timeout_s=args.timeout, reader=reader)
    if reader.refused:
        print(f"({reader.refused} records on answers for these requests were not written by a worker: ignored)\n")
    if reader.unbound:
        print(f"({reader.unbound} sealed answers under these requests' keys answer other requests: ignored)\n")
    answers = cast("dict[str, ValidatedAnswer]", replies)  # the `answers` topic's value model
    missing = 0
    for q in questions:
        print(f"Q: {q.question}")
        answer = answers.get(q.request_id)
        if answer is None:
            missing += 1
            print(f"(no answer within {args.timeout:.0f}s for request_id {q.request_id}; is a worker running?)\n")
            continue
        print(answer.answer_text)
        print(f"[{answer.classification}, {latency[q.request_id]:.2f}s, request_id {q.request_id}]\n")
    return 2 if missing else 0
