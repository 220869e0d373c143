"""The default backend: deterministic, offline, and unable to invent text.

It reads the evidence blocks and the question back out of the prompt it is
given (the same bytes a hosted model would get), picks the evidence sentences
that share the most meaning-bearing terms with the question, and answers in
the Phase C JSON with each sentence's own citation marker.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..policy import PROMPT_REFUSAL_LOCK
from ..text import content_terms, split_sentences
from .base import LLMReply

_HEADER = re.compile(
    r"^\[(?P<anchor>C\d+) \| chunk_id=(?P<chunk_id>[^|]+) \| knowledge_id=(?P<kid>[^|]+) \| "
    r"source=(?P<pdf>.+)#page=(?P<page>\d+)\]$"
)


@dataclass(frozen=True)
class EvidenceBlock:
    anchor: str
    chunk_id: str
    pdf: str
    page: int
    text: str


def parse_prompt(prompt_text: str) -> tuple[list[EvidenceBlock], str]:
    """Evidence blocks and the question from a PROMPT_V1 prompt (headers only ever start a line)."""
    evidence_part = prompt_text.split("### EVIDENCE\n", 1)[1].split("\n### END EVIDENCE", 1)[0]
    question = prompt_text.split("### USER QUESTION\n", 1)[1].split("\n\n### OUTPUT FORMAT", 1)[0].strip()
    blocks: list[EvidenceBlock] = []
    lines = evidence_part.split("\n")
    for header, body in zip(lines[0::2], lines[1::2]):
        m = _HEADER.match(header)
        if m:
            blocks.append(EvidenceBlock(m["anchor"], m["chunk_id"], m["pdf"], int(m["page"]), body))
    return blocks, question


class ExtractiveBackend:
    model_name = "extractive-v1"

    def __init__(self, max_sentences: int = 3, min_coverage: float = 0.34, min_shared_terms: int = 2):
        self.max_sentences = max_sentences
        self.min_coverage = min_coverage
        self.min_shared_terms = min_shared_terms

    def complete(self, prompt_text: str) -> LLMReply:
        blocks, question = parse_prompt(prompt_text)
        q_terms = content_terms(question)
        scored = []
        for order, block in enumerate(blocks):
            previous: set[str] = set()
            for position, sentence in enumerate(split_sentences(block.text)):
                own = q_terms & content_terms(sentence)
                # A sentence may lean on the one before it ("Lecanemab ... . The drug targets ...").
                in_context = own | (q_terms & previous)
                previous = content_terms(sentence)
                coverage = len(in_context) / len(q_terms) if q_terms else 0.0
                if own and len(in_context) >= min(self.min_shared_terms, len(q_terms)) \
                        and coverage >= self.min_coverage:
                    scored.append((-coverage, -len(own), order, position, sentence, block))
        if not scored:
            return LLMReply(text=PROMPT_REFUSAL_LOCK, finish_reason="stop")
        chosen = sorted(sorted(scored, key=lambda s: s[:4])[: self.max_sentences], key=lambda s: (s[2], s[3]))
        best = -min(s[0] for s in scored)
        reply = {
            "answer_sentences": [
                {"sentence": f"{sentence} [{block.anchor}]", "pdf": block.pdf, "page": block.page,
                 "chunk_id": block.chunk_id}
                for *_, sentence, block in chosen
            ],
            "confidence": "High" if best >= 0.75 else "Medium" if best >= 0.5 else "Low",
        }
        return LLMReply(text=json.dumps(reply, ensure_ascii=False), finish_reason="stop")
