"""Claim verification (CLAIM_VERIFY): a deterministic offline judge, an optional LLM judge, fail closed."""

from __future__ import annotations

from .grounding import grounding_for_query, pack_from_hits
from .judge import ClaimJudge
from .llm_judge import LLMJudge
from .offline import OfflineJudge
from .verify import fail_closed, verify_claims


def judge_from_settings(settings, llm_factory) -> ClaimJudge:
    """``CITESTREAM_VERIFY_JUDGE``: offline (default) or llm (the generation backend as judge)."""
    choice = getattr(settings, "verify_judge", "offline")
    if choice == "offline":
        return OfflineJudge()
    if choice == "llm":
        return LLMJudge(llm_factory())
    raise ValueError(f"unknown verify_judge {choice!r}: choose offline or llm")


__all__ = ["ClaimJudge", "LLMJudge", "OfflineJudge", "fail_closed", "grounding_for_query", "judge_from_settings",
           "pack_from_hits", "verify_claims"]
