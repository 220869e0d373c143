"""The default backend: deterministic, offline, and unable to invent text.

It reads the evidence blocks and the question back out of the prompt it is given (the same bytes a hosted model
gets) and answers in the Phase C JSON with source sentences copied verbatim, each followed by its own marker.

Which sentences: the ones the relevance model judges to answer the question. Every sentence unit of the
evidence (sentences, bulleted items, clauses of a run-on; ``text.sentence_units``) is scored with the question;
the best must reach ``RelevancePolicy.answer_threshold``, else the reply is the prompt's refusal lock. Up to
``max_sentences`` units scoring at least ``keep_ratio`` of the best (and the threshold) are quoted, in evidence
order, one Phase C row per chunk. Two structural rules, about the evidence and never about the question:

* fragments under 5 words and instructions aimed at a model (a prompt injection inside a document) are not
  quoted;
* a chosen unit that ends with a colon brings the list items that follow it in its chunk (up to six): the list
  is the answer the colon announces; and a chosen unit brings the next one when that one goes on from it
  ("It typically involves ...", "These include ...", "If this occurs, ..."): a definition or a rule often ends in
  the sentence after.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from ..embedding.batching import split_rows
from ..models.evidence import EvidenceBlock, parse_evidence
from ..core.prompt_sections import evidence_text, question_text
from ..core.definitions import asked_term, defines
from ..core.question_parts import part_slots, parts
from ..core.slots import fills
from ..core.texts import PROMPT_REFUSAL_LOCK
from ..models import QuestionReading
from ..models.assembly import SelectedEvidence
from ..core.policy import RelevancePolicy
from ..core.text_units import continues, read_units, sentence_units
from ..refusals import below_answer_threshold
from .base import LLMReply

LIST_ITEMS = 6


def parse_prompt(prompt_text: str) -> tuple[list[EvidenceBlock], str]:
    """Evidence blocks and the question from a PROMPT_V1 prompt (headers only ever start a line)."""
    evidence_part, question = evidence_text(prompt_text), question_text(prompt_text)
    if evidence_part is None or question is None:
        raise IndexError("not a PROMPT_V1 prompt: its evidence or question header is missing")
    return parse_evidence(evidence_part), question


@dataclass(frozen=True)
class Candidate:
    score: float        # the relevance model's P(this unit answers the question)
    block_order: int
    position: int
    sentence: str
    block: EvidenceBlock
    about: bool = False  # read after a subject said in the unit before it (``text.subject``)


def _with_list(c: Candidate, units: dict[tuple[int, int], str]) -> str:
    """A unit with the list items it announces ("... include the following:"): what the slot check reads."""
    if not c.sentence.rstrip().endswith(":"):
        return c.sentence
    items = (units.get((c.block_order, p)) for p in range(c.position + 1, c.position + 1 + LIST_ITEMS))
    return " ".join([c.sentence, *(item for item in items if item)])


def _with_context(kept: list[Candidate], units: dict[tuple[int, int], str]) -> list[Candidate]:
    """What a chosen unit needs to read whole: the unit before it when it was read with that unit's subject ("The
    drug targets ..." brings "Lecanemab, an antibody, ..."); the list items after it when it introduces a list
    ("... the following conditions apply:"); the unit after it when that one goes on from it (``continues``: "It
    typically involves ...", "If this occurs, ...": a definition or a rule often ends in the sentence after)."""
    out = {(c.block_order, c.position): c for c in kept}
    for c in kept:
        if c.about and (c.block_order, c.position - 1) in units:
            before = (c.block_order, c.position - 1)
            out.setdefault(before, replace(c, position=c.position - 1, sentence=units[before], about=False))
        if c.sentence.rstrip().endswith(":"):
            span = range(c.position + 1, c.position + 1 + LIST_ITEMS)
        else:
            follower = units.get((c.block_order, c.position + 1))
            span = range(c.position + 1, c.position + 2) if follower and continues(follower) else range(0)
        for position in span:
            item = units.get((c.block_order, position))
            if item is None:
                break
            out.setdefault((c.block_order, position), replace(c, position=position, sentence=item, about=False))
    return list(out.values())


def _defining(asking: str, slots: tuple[str, ...], candidates: list[Candidate], threshold: float) -> Candidate | None:
    """For a question asking what a term is, the best unit above the answer threshold that defines it
    (``core.definitions``): quoted alone, rather than the sentences that only use the term and score higher."""
    if not set(slots) & {"definition", "open"}:
        return None
    terms = asked_term(asking)
    defining = [c for c in candidates if c.score >= threshold and defines(c.sentence, terms)]
    return max(defining, key=lambda c: (c.score, -c.block_order, -c.position)) if defining else None


def _for_each_part(asked: str, kept: list[Candidate], candidates: list[Candidate], threshold: float) -> list[Candidate]:
    """The best unit above the answer threshold for each part of a coordinated question ("water, meals and
    alcohol") that the units kept so far do not name: one unit per part, each cited, rather than half an answer."""
    extra: list[Candidate] = []
    ranked = sorted(candidates, key=lambda c: (-c.score, c.block_order, c.position))
    for part in parts(asked):
        if any(part.covered_by(c.sentence) for c in (*kept, *extra)):
            continue
        best = next((c for c in ranked if c.score >= threshold and part.covered_by(c.sentence)
                     and c not in kept and c not in extra), None)
        if best is not None:
            extra.append(best)
    return extra


_HEADINGS: ContextVar[dict[str, tuple[str, ...]] | None] = ContextVar("evidence_headings", default=None)


@contextmanager
def reading_headings(evidence: Sequence[SelectedEvidence]) -> Iterator[None]:
    """The evidence's heading lines (``SelectedEvidence.headings``) for the backend, while generate runs it: the
    prompt shows each chunk as one line, where a heading line glued to the sentence under it cannot be told apart
    ("DOAC Stroke Prevention Direct oral ..."). Without them a block is read from its own text alone."""
    token = _HEADINGS.set({e.chunk_id: tuple(e.headings) for e in evidence})
    try:
        yield
    finally:
        _HEADINGS.reset(token)


class ExtractiveBackend:
    model_name = "extractive-v3"

    def __init__(self, relevance=None, policy: RelevancePolicy | None = None,
                 reader: Callable[[str], QuestionReading] | None = None):
        self._relevance = relevance
        self.policy = policy or RelevancePolicy()
        self.reader = reader
        """The question as read (``retrieval.reading``: typos, acronyms, the asking sentence) from the question in
        the prompt, which holds it as the user wrote it: the sentences are scored as every other stage scores
        them."""

    @property
    def relevance(self):
        if self._relevance is None:  # loaded on first use: constructing the backend stays cheap
            from ..config import get_settings
            from ..relevance import relevance_model_for

            self._relevance = relevance_model_for(get_settings())
        return self._relevance

    def complete(self, prompt_text: str) -> LLMReply:
        blocks, question = parse_prompt(prompt_text)
        chosen = self.choose(blocks, question)
        if not chosen:
            return LLMReply(text=PROMPT_REFUSAL_LOCK, finish_reason="stop")
        return LLMReply(text=json.dumps(self.reply(chosen), ensure_ascii=False), finish_reason="stop")

    def choose(self, blocks: list[EvidenceBlock], question: str) -> list[Candidate]:
        units = {(order, position): unit for order, block in enumerate(blocks)
                 for position, unit in enumerate(sentence_units(block.text))}
        headings = _HEADINGS.get() or {}
        readable = [(order, unit) for order, block in enumerate(blocks)
                    for unit in read_units(block.text, headings.get(block.chunk_id))]
        if not readable:
            return []
        reading = self.reader(question) if self.reader is not None else None
        asked, slot = (reading.asked, reading.slot) if reading is not None else (question, "open")
        flat = self.relevance.score(asked, [r for _, unit in readable for r in unit.readings])
        scores = [part.max() for part in split_rows(flat, [len(unit.readings) for _, unit in readable])]
        candidates = [Candidate(float(s), order, unit.position, unit.quote, blocks[order],
                                about=unit.about and unit.quote == units[(order, unit.position)])
                      for (order, unit), s in zip(readable, scores)]
        units.update({(order, unit.position): unit.quote for order, unit in readable})  # context: no heading either
        asking = reading.asking() if reading is not None else question
        slots = part_slots(asking) if reading is not None else (slot,)
        candidates = [c for c in candidates if any(fills(s, _with_list(c, units)) for s in slots)]  # a slot filled
        if not candidates:
            return []
        best = max(c.score for c in candidates)
        threshold = self.policy.threshold_for(slots, reading is not None and reading.read_whole())
        if below_answer_threshold(best, threshold):
            return []
        defining = _defining(asking, slots, candidates, threshold)
        if defining is not None:
            kept = [defining]
        else:
            floor = max(threshold, self.policy.keep_ratio * best)
            ranked = sorted((c for c in candidates if c.score >= floor),
                            key=lambda c: (-c.score, c.block_order, c.position))
            kept = ranked[: self.policy.requirement_sentences if slot == "requirement" else self.policy.max_sentences]
            kept += _for_each_part(asked, kept, candidates, threshold)
        return sorted(_with_context(kept, units), key=lambda c: (c.block_order, c.position))

    def reply(self, chosen: list[Candidate]) -> dict:
        rows: dict[int, dict] = {}
        for c in chosen:  # one row per chunk: the validator drops a repeated (pdf, page, chunk_id)
            row = rows.setdefault(c.block_order, {"sentence": "", "pdf": c.block.pdf, "page": c.block.page,
                                                  "chunk_id": c.block.chunk_id})
            row["sentence"] = f"{row['sentence']} {c.sentence} [{c.block.anchor}]".strip()
        best = max(c.score for c in chosen)
        high, answer = self.policy.high_confidence, self.policy.answer_threshold
        return {"answer_sentences": list(rows.values()),
                "confidence": "High" if best >= high else "Medium" if best >= answer else "Low"}
