"""Relevance and answerability: a cross-encoder trained here judges whether a text answers a question.

``model`` loads and runs it (shipped weights, or any cross-encoder by path or hub name); ``citestream.training``
makes it (``make model``).
"""

from .model import RelevanceModel, relevance_model_for

__all__ = ["RelevanceModel", "relevance_model_for"]
