"""A question's sentence scores while one stage runs: read before the cache or the model, added to as it scores.

A stage opens ``carrying`` around its work: the relevance model (``RelevanceModel.model_scores``) then looks a
(question, text) up in the record's ``SentenceScores`` first, and every score it hands out for that question is
kept, so the stage's output record can carry them on (``Carried.record``). Set per thread and task (a
``ContextVar``): the questions a worker runs side by side each see their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar

from ..models.common import SentenceScores, reading_key
from ..models.limits import MAX_CARRIED_SCORES


class Carried:
    """Scores of one question under one model: those the record carried (by key) and those handed out since (by
    text, so the hot path hashes only what it looks up in the record's)."""

    def __init__(self, model: str, asked: str, scores: SentenceScores | None = None):
        self.model, self.asked = model, asked
        usable = scores is not None and scores.model == model and scores.asked == asked
        self._by_key: dict[str, float] = dict(scores.scores) if usable and scores is not None else {}
        self._by_text: dict[str, float] = {}

    def get(self, text: str) -> float | None:
        hit = self._by_text.get(text)
        if hit is None and self._by_key:
            hit = self._by_key.get(reading_key(text))
        return hit

    def keep(self, text: str, score: float) -> None:
        self._by_text.setdefault(text, score)

    def record(self, texts: Iterable[str] | None = None) -> SentenceScores | None:
        """What the output record carries: the scores it came with and those handed out since (only those of
        ``texts`` when given: retrieve keeps its facts' readings, not its whole candidate pool's). None past the
        record's bound: the later stages then score for themselves, which costs time, never an answer."""
        if texts is None:
            scores = self._by_key | {reading_key(t): s for t, s in self._by_text.items()}
        else:
            wanted = {reading_key(t): t for t in texts}
            scores = {k: s for k, t in wanted.items()
                      if (s := self._by_text.get(t, self._by_key.get(k))) is not None}
        if len(scores) > MAX_CARRIED_SCORES:
            return None
        return SentenceScores(model=self.model, asked=self.asked, scores=scores)


_ACTIVE: ContextVar[Carried | None] = ContextVar("citestream_carried_scores", default=None)


@contextmanager
def carrying(model: str, asked: str, scores: SentenceScores | None = None) -> Iterator[Carried]:
    carried = Carried(model, asked, scores)
    token = _ACTIVE.set(carried)
    try:
        yield carried
    finally:
        _ACTIVE.reset(token)


def carrying_record(scores: SentenceScores | None) -> AbstractContextManager[Carried | None]:
    """``carrying`` for what a record carries; nothing when it carries none."""
    return nullcontext() if scores is None else carrying(scores.model, scores.asked, scores)


def active(model: str, question: str) -> Carried | None:
    """The running stage's scores for ``question`` under ``model``, if it carries them."""
    carried = _ACTIVE.get()
    return carried if carried is not None and carried.model == model and carried.asked == question else None
