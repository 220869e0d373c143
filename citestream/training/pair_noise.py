"""Noise (not a source): questions again with typos, or an acronym swapped for its long form (or back), same label,
so reworded questions are read like direct ones; and the corpus' acronyms it swaps."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence

from .corpus import CorpusChunk
from .pairs import Pair


# ---------------------------------------------------------------- noise (reworded questions)


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    edit = rng.choice(("drop", "swap", "double", "replace"))
    if edit == "drop":
        return word[:i] + word[i + 1:]
    if edit == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if edit == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + rng.choice("aeiourstn") + word[i + 1:]


def with_typos(question: str, rng: random.Random, n: int = 2) -> str:
    tokens = question.split()
    candidates = [i for i, t in enumerate(tokens) if len(t) >= 5 and t.isalpha()]
    for i in rng.sample(candidates, min(n, len(candidates))):
        tokens[i] = typo(tokens[i], rng)
    return " ".join(tokens)


def with_acronyms(question: str, acronyms: dict[str, str], rng: random.Random) -> str | None:
    """Swap one acronym of the corpus for its long form, or a long form for its acronym."""
    options = []
    for short, long in acronyms.items():
        if re.search(rf"\b{re.escape(short)}\b", question):
            options.append((rf"\b{re.escape(short)}\b", long))
        if re.search(rf"\b{re.escape(long)}\b", question, re.IGNORECASE):
            options.append((rf"(?i)\b{re.escape(long)}\b", short))
    if not options:
        return None
    pattern, replacement = rng.choice(options)
    return re.sub(pattern, replacement, question, count=1)


def reworded(pairs: Sequence[Pair], acronyms: dict[str, str], rng: random.Random, share: float = 0.25) -> list[Pair]:
    out = []
    for pair in pairs:
        if rng.random() >= share:
            continue
        variant = with_acronyms(pair.question, acronyms, rng) if rng.random() < 0.3 else None
        variant = variant or with_typos(pair.question, rng)
        if variant != pair.question:
            out.append(Pair(variant, pair.text, pair.label, pair.source, pair.kind, pair.group))
    return out


def corpus_acronyms(chunks: Sequence[CorpusChunk]) -> dict[str, str]:
    from ..qa.retrieve.acronyms import build_map

    texts: dict[str, list[str]] = defaultdict(list)
    for c in chunks:
        texts[c.pdf].append(c.text)
    mapping = build_map({pdf: " ".join(t) for pdf, t in texts.items()})
    return dict(mapping.long_of)
