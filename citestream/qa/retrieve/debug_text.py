"""The Phase A debug text contract (qa-contract-v1 Phase A)."""

from __future__ import annotations

from collections.abc import Sequence

from ...models import Fact


def format_facts(facts: Sequence[Fact]) -> str:
    """``FACTS:`` then one ``- "<quote>" (pdf="<name>", page=<int>, chunk_id="<id>", score=<float>)`` per fact."""
    lines = ["FACTS:"]
    for f in facts:
        quote = " ".join(f.quote.split())  # one line per fact, whatever line breaks the chunk kept
        lines.append(f'- "{quote}" (pdf="{f.pdf}", page={f.page}, chunk_id="{f.chunk_id}", score={f.score})')
    return "\n".join(lines)
