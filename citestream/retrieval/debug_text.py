"""The Phase A debug text contract (qa-contract-v1 Phase A)."""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Fact


def format_facts(facts: Sequence[Fact]) -> str:
    """``FACTS:`` then one ``- "<quote>" (pdf="<name>", page=<int>, chunk_id="<id>", score=<float>)`` per fact."""
    lines = ["FACTS:"]
    for f in facts:
        lines.append(f'- "{f.quote}" (pdf="{f.pdf}", page={f.page}, chunk_id="{f.chunk_id}", score={f.score})')
    return "\n".join(lines)
