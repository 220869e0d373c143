"""The configured generation backend: extractive (default, offline), OpenAI-compatible HTTP or a local GGUF."""

from __future__ import annotations

from ..config import Settings
from .base import LLMBackend
from .extractive import ExtractiveBackend
from .openai import OpenAIBackend

BACKENDS = ("extractive", "openai", "local")


def backend_from_settings(settings: Settings, relevance=None, relevance_policy=None, reader=None) -> LLMBackend:
    """The configured backend; the extractive one quotes what ``relevance`` (the relevance model) judges answers to
    the question as ``reader`` reads it."""
    if settings.llm_backend == "extractive":
        return ExtractiveBackend(relevance, relevance_policy, reader)
    if settings.llm_backend == "openai":
        return OpenAIBackend(settings.openai_base_url, settings.openai_model,
                             settings.openai_api_key.get_secret_value(), settings.llm_timeout_s,
                             json_mode=settings.openai_json_mode)
    if settings.llm_backend == "local":  # optional extra `local-llm`: llama-cpp-python and a GGUF
        from .local import LocalLlamaBackend

        return LocalLlamaBackend(getattr(settings, "local_model_path", "") or None)
    raise ValueError(f"unknown llm_backend {settings.llm_backend!r}: choose one of {', '.join(BACKENDS)}")


