"""Prompt contract V1 (answer-assembly-contract R2.1, R2.6): a frozen template filled deterministically.

The template is a literal file pinned by its SHA-256: editing it without
bumping ``TEMPLATE_VERSION`` and ``TEMPLATE_SHA256`` stops every build, so a
prompt change is always a conscious version change. Evidence and question are
substituted in one pass, so text inside them is never re-read as a
placeholder, and ``check_structure`` verifies every built prompt against the
frozen section order before it may leave this stage.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files

from ...core.hashing import sha256_hex
from ...core.prompt_sections import (
    EVIDENCE, END_EVIDENCE, OUTPUT, QUESTION, SAFETY, SECTION_HEADERS, STRUCTURE_LINES, SYSTEM, sections,
    structure_positions,
)
from ...core.texts import PROMPT_REFUSAL_LOCK
from ...core.tokens import TokenCount
from ...models.assembly import PromptTokens

__all__ = [
    "END_EVIDENCE", "EVIDENCE", "OUTPUT", "QUESTION", "SAFETY", "SECTION_HEADERS", "STRUCTURE_LINES", "SYSTEM",
    "TEMPLATE_FILE", "TEMPLATE_SHA256", "TEMPLATE_VERSION", "TemplateChanged", "TokenCount", "check_structure",
    "count_prompt_tokens", "normalize_question", "render_prompt", "sections", "sha256_hex", "template_sha256",
    "template_text",
]

TEMPLATE_VERSION = "PROMPT_V1"
TEMPLATE_FILE = "prompt_template_v1.txt"
TEMPLATE_SHA256 = "f7b70a9660879c6351925ca2983e250b4e90f0667b7dc299608675e8a0977206"

_PLACEHOLDER = re.compile(r"\{\{(EVIDENCE_BLOCK|USER_QUESTION)\}\}")


class TemplateChanged(RuntimeError):
    """The template file's bytes are not the pinned PROMPT_V1 bytes."""


@lru_cache(maxsize=1)
def template_text() -> str:
    text = files(__package__).joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
    if sha256_hex(text) != TEMPLATE_SHA256:
        raise TemplateChanged(
            f"{TEMPLATE_FILE} differs from {TEMPLATE_VERSION} (sha256 {sha256_hex(text)}); a template edit is a new "
            "version: bump TEMPLATE_VERSION and TEMPLATE_SHA256 together")
    return text


def template_sha256() -> str:
    return sha256_hex(template_text())


def normalize_question(question: str) -> str:
    """PB2: the question as received; whitespace normalised, nothing else."""
    return " ".join(question.split())


def render_prompt(evidence_block: str, question: str) -> str:
    """PB1: the frozen sections with the evidence block and the question put in their places, in one pass."""
    values = {"EVIDENCE_BLOCK": evidence_block, "USER_QUESTION": normalize_question(question)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template_text())


def check_structure(prompt_text: str, evidence_block: str, question: str) -> str | None:
    """P1/P2.1/P3.2/PB1: why a built prompt breaks the frozen contract, or None when it holds."""
    found = [line for line, _ in structure_positions(prompt_text)]
    if found != list(STRUCTURE_LINES):
        return f"section headers are {found}, expected {list(STRUCTURE_LINES)} (missing, moved or duplicated)"
    parts = sections(prompt_text)
    if PROMPT_REFUSAL_LOCK not in parts[SYSTEM]:
        return "refusal lock is not inside the system instructions"
    if prompt_text.index(PROMPT_REFUSAL_LOCK) > prompt_text.index(EVIDENCE + "\n"):
        return "refusal lock appears after the evidence"
    if parts[EVIDENCE] != f"{EVIDENCE}\n{evidence_block}\n{END_EVIDENCE}\n\n":
        return "evidence section is not exactly the evidence block"
    if parts[QUESTION] != f"{QUESTION}\n{normalize_question(question)}\n\n":
        return "question section is not exactly the question"
    return None


def count_prompt_tokens(prompt_text: str, reserved_output_tokens: int, count: TokenCount) -> PromptTokens:
    """PB3/PB4 split, counted on the built prompt's own sections (so the parts add up to the whole)."""
    parts = sections(prompt_text)
    tokens = PromptTokens(
        system_tokens=count(parts[SYSTEM]),
        safety_tokens=count(parts[SAFETY]),
        evidence_tokens=count(parts[EVIDENCE]),
        question_tokens=count(parts[QUESTION]),
        output_format_tokens=count(parts[OUTPUT]),
        reserved_output_tokens=reserved_output_tokens,
    )
    tokens.total_prompt_tokens = (tokens.system_tokens + tokens.safety_tokens + tokens.evidence_tokens
                                  + tokens.question_tokens + tokens.output_format_tokens
                                  + tokens.reserved_output_tokens)
    return tokens
