"""Anchors and the evidence block (answer-assembly-contract R2.4, R2.5, P3.1)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models.assembly import SelectedEvidence

EVIDENCE_HEADER = re.compile(r"^\[C\d+ \| chunk_id=[^|]+ \| knowledge_id=[^|]+ \| source=[^|]+\]$")
_HEADER_START = re.compile(r"^\[\s*C\d+\s*\|")


def anchor(position: int) -> str:
    """R2.4: the anchor is the position in the final, frozen evidence order."""
    return f"C{position}"


def header(e: SelectedEvidence) -> str:
    """P3.1: the only metadata allowed in the prompt: anchor, chunk_id, knowledge_id, source."""
    return f"[{e.citation_anchor} | chunk_id={e.chunk_id} | knowledge_id={e.knowledge_id} | source={e.source}]"


def render_evidence(selected: Sequence[SelectedEvidence]) -> str:
    """R2.5: each chunk as its header line and its sanitized text line, in anchor order."""
    return "\n".join(f"{header(e)}\n{e.sanitized_text}" for e in selected)


def breaks_structure(sanitized_text: str) -> bool:
    """A text line that would read as a section header or an evidence header (it starts a prompt line)."""
    return sanitized_text.startswith("###") or bool(_HEADER_START.match(sanitized_text))
