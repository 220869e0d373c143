"""Relevance and answerability: a cross-encoder trained here judges whether a text answers a question.

``model`` loads and runs it (shipped weights, or any cross-encoder by path or hub name), ``authority`` reads
which regulator a question asks about. ``citestream.training`` makes the model (``make model``).
"""

from .authority import AskedScope, asked_scope, named_authorities
from .model import RelevanceModel, relevance_model_for

__all__ = ["AskedScope", "RelevanceModel", "asked_scope", "named_authorities", "relevance_model_for"]
