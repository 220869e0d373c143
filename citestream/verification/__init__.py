"""Claim verification (CLAIM_VERIFY): a deterministic offline judge, an optional LLM judge, fail closed."""

from __future__ import annotations

from .judge import ClaimJudge
from .llm_judge import LLMJudge
from .rule_judge import OfflineJudge
from .relevance_judge import PARAPHRASE_THRESHOLD, SUPPORT_THRESHOLD, RelevanceJudge
from .verify_claims import fail_closed, pack_finder, verify_claims


def judge_from_settings(settings, llm_factory, relevance_factory) -> ClaimJudge:
    """``CITESTREAM_VERIFY_JUDGE``: relevance (default: the relevance model plus number and polarity checks),
    rules (the deterministic term-matching judge) or llm (the generation backend as judge)."""
    choice = getattr(settings, "verify_judge", "relevance")
    if choice == "relevance":
        return RelevanceJudge(relevance_factory(), getattr(settings, "verify_support_threshold", SUPPORT_THRESHOLD),
                              getattr(settings, "verify_paraphrase_threshold", PARAPHRASE_THRESHOLD))
    if choice == "rules":
        return OfflineJudge()
    if choice == "llm":
        return LLMJudge(llm_factory())
    raise ValueError(f"unknown verify_judge {choice!r}: choose relevance, rules or llm")


__all__ = ["ClaimJudge", "LLMJudge", "OfflineJudge", "RelevanceJudge", "fail_closed", "judge_from_settings",
           "pack_finder", "verify_claims"]
