"""PROMPT_V1's section headers and the text between them: assembly checks a prompt by them, the backends read it."""

from __future__ import annotations

SYSTEM, SAFETY, EVIDENCE, END_EVIDENCE, QUESTION, OUTPUT = (
    "### SYSTEM INSTRUCTIONS",
    "### SAFETY AND GROUNDING RULES",
    "### EVIDENCE",
    "### END EVIDENCE",
    "### USER QUESTION",
    "### OUTPUT FORMAT",
)
SECTION_HEADERS = (SYSTEM, SAFETY, EVIDENCE, QUESTION, OUTPUT)
"""P1: the five sections, in their frozen order."""
STRUCTURE_LINES = (SYSTEM, SAFETY, EVIDENCE, END_EVIDENCE, QUESTION, OUTPUT)
"""Every line of a built prompt that starts with '### ', in order, exactly once each."""


def structure_positions(prompt_text: str) -> list[tuple[str, int]]:
    """Every line that starts with '### ' and its offset, in order."""
    positions, offset = [], 0
    for line in prompt_text.split("\n"):
        if line.startswith("### "):
            positions.append((line, offset))
        offset += len(line) + 1
    return positions


def sections(prompt_text: str) -> dict[str, str]:
    """The prompt cut at its section headers; each section owns the text up to the next header."""
    starts = [(line, offset) for line, offset in structure_positions(prompt_text) if line in SECTION_HEADERS]
    bounds = [offset for _, offset in starts] + [len(prompt_text)]
    return {line: prompt_text[bounds[i]:bounds[i + 1]] for i, (line, _) in enumerate(starts)}


def _between(prompt_text: str, start: str, end: str) -> str | None:
    _, found, rest = prompt_text.partition(start)
    return rest.partition(end)[0] if found else None


def evidence_text(prompt_text: str) -> str | None:
    """The evidence block: after the first ``### EVIDENCE`` line up to ``### END EVIDENCE``; None without one."""
    return _between(prompt_text, f"{EVIDENCE}\n", f"\n{END_EVIDENCE}")


def question_text(prompt_text: str) -> str | None:
    """The question: after the first ``### USER QUESTION`` line up to the output format; None without one."""
    text = _between(prompt_text, f"{QUESTION}\n", f"\n\n{OUTPUT}")
    return None if text is None else text.strip()
