"""Answerability (R5, qa-v2): what the relevance model reads for a row, and the closest source sentence quoted
when nothing answers (the near miss; its refusal is ``refusals.near_miss``)."""

from __future__ import annotations

from ...core.text_units import Unit, read_units
from ...embedding.batching import split_rows
from ...models.answer import RelatedClause
from ...models.assembly import AnswerBundle, SelectedEvidence


def related_clause(question: str, bundle: AnswerBundle, relevance) -> RelatedClause | None:
    """The quotable source unit the relevance model scores highest for the question (ties: evidence order), if
    any, read as every stage reads it (``text.read_units``)."""
    units = [(unit, e) for e in bundle.selected_evidence for unit in units_of(e)]
    if relevance is None or not units:
        return None
    flat = relevance.score(question, [r for u, _ in units for r in u.readings])
    scores = [part.max() for part in split_rows(flat, [len(u.readings) for u, _ in units])]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    unit, evidence = units[best]
    return RelatedClause(text=unit.quote, pdf=evidence.pdf, page=evidence.page, chunk_id=evidence.chunk_id,
                         relevance=round(float(scores[best]), 4))


def row_readings(plain: str, evidence: SelectedEvidence) -> list[str]:
    """What the relevance model reads for an accepted row: the units of its chunk it quotes, as every stage reads
    them (a unit after its subject, ``text.read_units``); the row itself when it quotes none whole (a model that
    writes its own words). A row answers when one of them does."""
    return [r for u in units_of(evidence) if u.quote in plain for r in u.readings] or [plain]


def units_of(evidence: SelectedEvidence) -> tuple[Unit, ...]:
    """A chunk's units as the prompt shows it, read with its heading lines (as the backend read them)."""
    return read_units(evidence.sanitized_text, tuple(evidence.headings))
