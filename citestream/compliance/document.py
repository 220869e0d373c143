"""The evaluated document as a list of text leaves, each with its JSONPath evidence pointer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

QUESTION_SECTIONS = ("unknown", "question", "open_issue")


@dataclass(frozen=True)
class Leaf:
    path: str      # $.unknowns[0].question
    section: str   # the top-level key: unknowns, known_constraints, summary...
    text: str

    @property
    def is_question(self) -> bool:
        return self.text.rstrip().endswith("?") or any(s in self.section.lower() for s in QUESTION_SECTIONS)


def leaves(document: Any, path: str = "$", section: str = "") -> list[Leaf]:
    """Every non-empty string in the document, depth first, in document order."""
    if isinstance(document, str):
        return [Leaf(path, section, document)] if document.strip() else []
    out: list[Leaf] = []
    if isinstance(document, dict):
        for key, value in document.items():
            out.extend(leaves(value, f"{path}.{key}", section or str(key)))
    elif isinstance(document, list):
        for i, value in enumerate(document):
            out.extend(leaves(value, f"{path}[{i}]", section))
    return out
