"""Claim verification (CLAIM_VERIFY): a deterministic offline judge, an optional LLM judge, fail closed.

``verify_claims`` (the stage), ``judge_choice`` (which judge the settings name), the judges (``relevance_judge``,
``rule_judge``, ``llm_judge``) and the premise check of the question path (``premises``).
"""

from .judge import ClaimJudge
from .judge_choice import judge_from_settings
from .llm_judge import LLMJudge
from .relevance_judge import PARAPHRASE_THRESHOLD, SUPPORT_THRESHOLD, RelevanceJudge
from .rule_judge import OfflineJudge
from .verify_claims import fail_closed, pack_finder, verify_claims

__all__ = ["PARAPHRASE_THRESHOLD", "SUPPORT_THRESHOLD", "ClaimJudge", "LLMJudge", "OfflineJudge", "RelevanceJudge",
           "fail_closed", "judge_from_settings", "pack_finder", "verify_claims"]
