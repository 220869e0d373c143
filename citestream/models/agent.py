"""The AgentRunResponse envelope of rag-loop-acceptance (ingest, retrieve-for-verify, verify)."""

from __future__ import annotations

from typing import Literal

from .common import Contract


class AgentError(Contract):
    code: Literal["TASK_FAILED", "VALIDATION_ERROR", "UNSUPPORTED_TASK_TYPE"]
    message: str


AgentStatus = Literal["ok", "error"]
