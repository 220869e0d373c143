"""Prompt contract V1 (answer-assembly-contract R2.1, R2.6): a frozen template filled deterministically.

The template is a literal file; evidence and question are substituted in one
pass, so text inside the evidence can never be re-interpreted as a placeholder
or move into the instruction sections.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib.resources import files

from .models.assembly import PromptTokens

TEMPLATE_VERSION = "PROMPT_V1"
SECTION_HEADERS = (
    "### SYSTEM INSTRUCTIONS",
    "### SAFETY AND GROUNDING RULES",
    "### EVIDENCE",
    "### USER QUESTION",
    "### OUTPUT FORMAT",
)
_PLACEHOLDER = re.compile(r"\{\{(EVIDENCE_BLOCK|USER_QUESTION)\}\}")


@lru_cache(maxsize=1)
def template_text() -> str:
    return files("citestream").joinpath("prompt_template_v1.txt").read_text(encoding="utf-8")


def template_sha256() -> str:
    return hashlib.sha256(template_text().encode("utf-8")).hexdigest()


def _sections(template: str) -> dict[str, str]:
    """The template split at its frozen headers (each header owns the text up to the next)."""
    positions = [template.index(h) for h in SECTION_HEADERS]
    if positions != sorted(positions):
        raise ValueError("prompt template sections are out of order")
    bounds = [*positions, len(template)]
    return {h: template[bounds[i]:bounds[i + 1]] for i, h in enumerate(SECTION_HEADERS)}


def normalize_question(question: str) -> str:
    """PB2: the question as received, whitespace normalised only."""
    return " ".join(question.split())


def render_prompt(evidence_block: str, question: str) -> str:
    values = {"EVIDENCE_BLOCK": evidence_block, "USER_QUESTION": normalize_question(question)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template_text())


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def count_prompt_tokens(evidence_block: str, question: str, reserved_output_tokens: int, count) -> PromptTokens:
    """PB3/PB4 split: fixed instruction sections, evidence, question, reserved output."""
    sections = _sections(template_text())
    fixed = sections["### SYSTEM INSTRUCTIONS"]
    safety = sections["### SAFETY AND GROUNDING RULES"] + sections["### OUTPUT FORMAT"]
    evidence_frame = sections["### EVIDENCE"].replace("{{EVIDENCE_BLOCK}}", "")
    question_frame = sections["### USER QUESTION"].replace("{{USER_QUESTION}}", "")
    tokens = PromptTokens(
        system_tokens=count(fixed),
        safety_tokens=count(safety),
        evidence_tokens=count(evidence_frame) + count(evidence_block),
        question_tokens=count(question_frame) + count(normalize_question(question)),
        reserved_output_tokens=reserved_output_tokens,
    )
    tokens.total_prompt_tokens = (tokens.system_tokens + tokens.safety_tokens + tokens.evidence_tokens
                                  + tokens.question_tokens + tokens.reserved_output_tokens)
    return tokens
