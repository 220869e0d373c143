"""Any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, hosted APIs).

The prompt goes out as one user message, byte for byte (R3: no added system
message, no added instructions). Failures are sorted for the R3 wrapper:
timeouts, dropped connections, 429 and 5xx are transient (retried with the
same bytes); any other 4xx and replies that are not chat completions are not.
A provider's error body is cut short and scrubbed (``scrub``) before it can
reach a record: it may echo the key, the prompt or internal details.
"""

from __future__ import annotations

import email.utils
import time

import httpx

from ..core.scrub import scrub
from .base import LLMError, LLMReply, TransientLLMError

ERROR_BODY_CHARS = 120


def _retry_after_s(value: str | None) -> float | None:
    """``Retry-After`` as seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class OpenAIBackend:
    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 60.0, json_mode: bool = True,
                 max_tokens: int | None = 800):
        self.model_name = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.json_mode = json_mode
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_s)

    def request_body(self, prompt_text: str) -> dict:
        body: dict = {"model": self.model_name, "temperature": 0,
                      "messages": [{"role": "user", "content": prompt_text}]}
        if self.max_tokens:
            body["max_tokens"] = self.max_tokens
        if self.json_mode:  # JSON mode: the Phase C reply is one JSON object (or the refusal lock, then malformed)
            body["response_format"] = {"type": "json_object"}
        return body

    def complete(self, prompt_text: str) -> LLMReply:
        try:
            response = self._client.post(self.url, json=self.request_body(prompt_text))
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientLLMError(f"{type(exc).__name__}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise TransientLLMError(f"HTTP {response.status_code}",
                                    retry_after_s=_retry_after_s(response.headers.get("retry-after")))
        if response.status_code >= 400:
            raise LLMError(f"HTTP {response.status_code}: {scrub(response.text[:2000], ERROR_BODY_CHARS)}")
        try:
            data = response.json()
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            content = choice["message"].get("content") or ""
            if not isinstance(content, str):
                raise TypeError("message content is not text")
            return LLMReply(
                text=content, finish_reason=choice.get("finish_reason"),
                prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
            )
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(f"reply is not an OpenAI chat completion: {type(exc).__name__}: "
                           f"{scrub(str(exc), ERROR_BODY_CHARS)}") from exc
