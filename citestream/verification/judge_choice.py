"""Which claim judge runs: the one ``CITESTREAM_VERIFY_JUDGE`` names."""

from __future__ import annotations

from .judge import ClaimJudge
from .llm_judge import LLMJudge
from .rule_judge import OfflineJudge
from .relevance_judge import PARAPHRASE_THRESHOLD, SUPPORT_THRESHOLD, RelevanceJudge


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

