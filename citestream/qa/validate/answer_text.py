"""The output text contract (``ANSWER:``, numbered cited sentences, ``CONFIDENCE:``) and the answer's
classification (DEFINITIVE or CONDITIONAL)."""

from __future__ import annotations

import re

from ...models.answer import AnswerSentence

_CONDITIONAL = re.compile(
    r"\b(?:if|unless|provided that|only when|only if|depending on|except (?:when|where|for|if)|subject to"
    r"|in (?:cases|the event|circumstances) (?:where|that|of)|as long as|on condition that|contingent on"
    r"|no later than|prior to|within \d+ (?:calendar |business |working )?(?:days?|weeks?|months?|years?|hours?))\b",
    re.IGNORECASE,
)


def render_answer(sentences: list[AnswerSentence], confidence: str) -> str:
    """Output text contract: ``ANSWER:``, numbered sentences ending ``(pdf, p<page>, <chunk_id>)``, ``CONFIDENCE:``."""
    lines = ["ANSWER:"]
    lines += [f"{s.n}. {s.text} ({s.pdf}, p{s.page}, {s.chunk_id})" for s in sentences]
    lines.append(f"CONFIDENCE: {confidence}")
    return "\n".join(lines)


def classify(sentences: list[AnswerSentence]) -> str:
    """DEFINITIVE unless an accepted sentence states a contingency, condition or deadline (CONDITIONAL)."""
    return "CONDITIONAL" if any(_CONDITIONAL.search(s.text) for s in sentences) else "DEFINITIVE"
