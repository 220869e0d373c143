"""The evidence block's format (answer-assembly-contract R2.4, R2.5, P3.1): anchors, rendering, parsing.

Shared by assembly (renders it), the model backends (parse it back) and ledger replay (re-renders it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .assembly import SelectedEvidence

_HEADER_START = re.compile(r"^\[\s*C\d+\s*\|")
_HEADER_FIELDS = re.compile(
    r"^\[(?P<anchor>C\d+) \| chunk_id=(?P<chunk_id>[^|]+) \| knowledge_id=[^|]+ \| "
    r"source=(?P<pdf>.+)#page=(?P<page>\d+)\]$"
)


@dataclass(frozen=True)
class EvidenceBlock:
    """One chunk as a model reads it back out of a prompt: the fields of its header, and its text."""

    anchor: str
    chunk_id: str
    pdf: str
    page: int
    text: str


def anchor(position: int) -> str:
    """R2.4: the anchor is the position in the final, frozen evidence order."""
    return f"C{position}"


def header(e: SelectedEvidence) -> str:
    """P3.1: the only metadata allowed in the prompt: anchor, chunk_id, knowledge_id, source."""
    return f"[{e.citation_anchor} | chunk_id={e.chunk_id} | knowledge_id={e.knowledge_id} | source={e.source}]"


def render_evidence(selected: Sequence[SelectedEvidence]) -> str:
    """R2.5: each chunk as its header line and its sanitized text line, in anchor order."""
    return "\n".join(f"{header(e)}\n{e.sanitized_text}" for e in selected)


def parse_evidence(evidence: str) -> list[EvidenceBlock]:
    """The inverse of ``render_evidence``: header and text line pairs back into blocks."""
    lines = evidence.split("\n")
    return [EvidenceBlock(m["anchor"], m["chunk_id"], m["pdf"], int(m["page"]), body)
            for header_line, body in zip(lines[0::2], lines[1::2]) if (m := _HEADER_FIELDS.match(header_line))]


def breaks_structure(sanitized_text: str) -> bool:
    """A text line that would read as a section header or an evidence header (it starts a prompt line)."""
    return sanitized_text.startswith("###") or bool(_HEADER_START.match(sanitized_text))
