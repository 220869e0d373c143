"""The whole training set: every pair of the chosen sources, deterministic for a seed; its digest and its file."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

from .corpus import CorpusChunk
from .construction_pairs import authority_pairs, false_premise_pairs, offtopic_pairs, premise_pairs
from .pair_noise import corpus_acronyms, reworded
from .pairs import SOURCES, Pair, claim_pairs, definition_pairs, fdaqa_pairs, llm_pairs


def build_pairs(chunks: Sequence[CorpusChunk], llm_questions: Sequence[dict], fdaqa: Sequence[dict],
                offtopic_questions: Sequence[str], sources: Iterable[str] = SOURCES, seed: int = 20261123,
                noise: bool = True, llm_claims: Sequence[dict] = ()) -> list[Pair]:
    """Every pair of the chosen sources, deterministic for a seed; duplicates (same question and text) dropped."""
    sources = set(sources)
    rng = random.Random(seed)
    pairs: list[Pair] = []
    answered: list[Pair] = []
    if "llm" in sources:
        made = llm_pairs(llm_questions, chunks, rng)
        pairs += made
        answered += [p for p in made if p.label == 1]
    if "definitions" in sources:
        made = definition_pairs(chunks, rng)
        pairs += made
        answered += [p for p in made if p.label == 1]
    if "fdaqa" in sources:
        pairs += fdaqa_pairs(fdaqa, chunks, rng)
    if "claims" in sources:
        pairs += claim_pairs(llm_claims, chunks, rng)
    base = sorted(answered, key=lambda p: (p.question, p.text))
    if "authority" in sources:
        pairs += authority_pairs(rng.sample(base, len(base) // 3), {c.text: c for c in chunks}
                                 | {u: c for c in chunks for u in c.units}, rng)
    if "premise" in sources:
        pairs += premise_pairs(rng.sample(base, len(base) // 4), rng)
        pairs += false_premise_pairs(chunks, rng, len(base) // 4)
    if "offtopic" in sources and offtopic_questions:
        pairs += offtopic_pairs(offtopic_questions, chunks, rng)
    if noise:
        pairs += reworded(pairs, corpus_acronyms(chunks), rng)
    unique = {(p.question, p.text): p for p in pairs}
    return sorted(unique.values(), key=lambda p: (p.group, p.source, p.question, p.text))


def pairs_sha256(pairs: Sequence[Pair]) -> str:
    digest = hashlib.sha256()
    for p in pairs:
        digest.update(json.dumps(asdict(p), sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def write_pairs(pairs: Sequence[Pair], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as sink:
        for p in pairs:
            sink.write(json.dumps(asdict(p), ensure_ascii=False) + "\n")
