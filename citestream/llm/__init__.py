"""Generation backends behind one interface; ``backend_from_settings`` (``backends``) picks one by configuration."""

from .backends import BACKENDS, backend_from_settings
from .base import LLMBackend, LLMError, LLMReply, TransientLLMError
from .extractive import ExtractiveBackend
from .openai import OpenAIBackend

__all__ = ["BACKENDS", "ExtractiveBackend", "LLMBackend", "LLMError", "LLMReply", "OpenAIBackend",
           "TransientLLMError", "backend_from_settings"]
