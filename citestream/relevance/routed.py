"""Two question judges behind one face: a question that comes with the asker's situation goes to the judge trained
to read it with that situation, any other to the question judge.

The judges were trained apart: read with its background, a scenario question's answering passage is found and
chosen more often by a judge trained on such readings, while the same judge does worse on one-sentence questions
(docs/experiments/2026-11-30-background.md). Each judge keeps its own name, cache and carried scores, so a record
says which one scored it (``name_for``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .scorer import RelevanceModel


class BackgroundRouted:
    """``plain`` for a question scored alone, ``background`` for one ``route`` says leads with the asker's
    situation; anything else a judge has (its metadata, cosine share, runtime) is the plain judge's."""

    def __init__(self, plain: RelevanceModel, background: RelevanceModel, route: Callable[[str], bool]):
        self.plain, self.background, self._route = plain, background, route

    def judge_for(self, question: str) -> RelevanceModel:
        return self.background if self._route(question) else self.plain

    def name_for(self, question: str) -> str:
        return self.judge_for(question).name

    def score(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.judge_for(question).score(question, texts)

    def model_scores(self, question: str, texts: Sequence[str]) -> np.ndarray:
        return self.judge_for(question).model_scores(question, texts)

    def score_passages(self, question: str, passages: Sequence[str]) -> np.ndarray:
        return self.judge_for(question).score_passages(question, passages)

    def read_stored_vectors(self, fetch) -> None:
        self.plain.read_stored_vectors(fetch)
        self.background.read_stored_vectors(fetch)

    def clear_cache(self) -> None:
        self.plain.clear_cache()
        self.background.clear_cache()

    def __getattr__(self, attribute: str):
        return getattr(self.plain, attribute)
