"""Any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, hosted APIs)."""

from __future__ import annotations

import httpx

from .base import LLMError, LLMReply, TransientLLMError


class OpenAIBackend:
    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_s: float = 60.0, json_mode: bool = True):
        self.model_name = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout_s
        self._json_mode = json_mode

    def complete(self, prompt_text: str) -> LLMReply:
        body = {"model": self.model_name, "temperature": 0,
                "messages": [{"role": "user", "content": prompt_text}]}
        if self._json_mode:
            body["response_format"] = {"type": "json_object"}
        try:
            response = httpx.post(self._url, json=body, headers=self._headers, timeout=self._timeout)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientLLMError(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise TransientLLMError(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise LLMError(f"HTTP {response.status_code}: {response.text[:200]}")
        try:
            data = response.json()
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            return LLMReply(
                text=choice["message"]["content"] or "", finish_reason=choice.get("finish_reason"),
                prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
            )
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"reply is not an OpenAI chat completion: {exc}") from exc
