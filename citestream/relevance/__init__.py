"""Relevance and answerability: a cross-encoder trained here judges whether a text answers a question.

``model`` loads and runs it (shipped weights, or any cross-encoder by path or hub name); ``carried`` hands a stage the
scores its record carries; ``citestream.training`` makes it (``make model``).
"""

from .carried import carrying, carrying_record
from .scorer import ClaimRelevance, RelevanceModel, background_judge_spec, judge_spec, relevance_model_for

__all__ = ["ClaimRelevance", "RelevanceModel", "background_judge_spec", "carrying", "carrying_record", "judge_spec",
           "relevance_model_for"]
