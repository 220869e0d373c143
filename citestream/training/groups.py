"""Ranked groups for the second training stage: a question, the sentence that answers it, and the sentences a
retriever would confuse with it (hard negatives), mined with the embedding model that feeds retrieval.

Why: the first stage learns from pairs (does this text answer?) with mostly easy negatives, and on the qa-v2 dev
split it ranked the answering sentence first less often than the embedding cosine it started from. A question's
real competitors are on-topic sentences that lack the asked fact; a group puts them side by side, so the loss can
teach the order (``refine.py``).

* ``llm`` — the LLM questions about corpus sentences: negatives are the corpus sentences closest to the question;
* ``definitions`` — "What is X?" for glossary entries: the corpus sentences closest to it;
* ``fdaqa`` — the FDA Q&A questions: the first substantive sentence of the answer against the closest sentences
  of the same guidance's other answers, and two corpus sentences.

A candidate that restates the positive (word overlap ≥ 0.5, or most of its 3-grams) is never a negative. Half of a
group's negatives are the hardest; the rest are drawn from the next ones, so not every group is a near-duplicate
contest. Deterministic for the seed and the embedding model.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core.text_units import sentence_units
from .corpus import CorpusChunk, by_position, informative, written_about
from .pairs import _containment, _first_substantive, _overlap, definition_units

SEED = 20261125
EMBED_BATCH = 32


@dataclass(frozen=True)
class Group:
    question: str
    texts: tuple[str, ...]   # the answering sentence first, then the negatives
    source: str
    group: str               # the document (or FDA Q&A guidance)


def groups_by_source(groups: Sequence[Group]) -> dict[str, int]:
    """How many groups each source gave (the training records' metadata)."""
    return {s: sum(g.source == s for g in groups) for s in sorted({g.source for g in groups})}


def _negatives(rng: random.Random, question_vector: np.ndarray, positive: str, texts: Sequence[str],
               vectors: np.ndarray, k: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
    sims = vectors @ question_vector
    found: list[str] = []
    for i in np.argsort(-sims)[:60]:
        text = texts[i]
        if text == positive or text in exclude or _overlap(text, positive) >= 0.5 \
                or _containment(positive, text) >= 0.5:
            continue
        found.append(text)
        if len(found) >= 3 * k:
            break
    hard, rest = found[:(k + 1) // 2], found[(k + 1) // 2:]
    return hard + rng.sample(rest, min(k - len(hard), len(rest)))


def mine_groups(chunks: Sequence[CorpusChunk], llm_questions: Sequence[dict], fdaqa: Sequence[dict], embed,
                negatives: int = 7, seed: int = SEED) -> list[Group]:
    """Every group of the three sources; ``embed(texts, batch_size)`` → unit vectors (the embedder's)."""
    rng = random.Random(seed)
    units = sorted({u for c in chunks for u in c.units if informative(u, 6)})
    unit_vectors = embed(units, batch_size=EMBED_BATCH)
    out: list[Group] = []

    by_key = by_position(chunks)
    vectors = embed([r["question"] for r in llm_questions], batch_size=EMBED_BATCH)
    for row, vector in zip(llm_questions, vectors):
        if (about := written_about(row, by_key)) is None:
            continue
        chunk, sentence = about
        found = _negatives(rng, vector, sentence, units, unit_vectors, negatives)
        out.append(Group(row["question"], (sentence, *found), "llm", chunk.pdf))

    asked = []
    for term, unit, chunk in definition_units(chunks):
        short = re.sub(r"\s*\([^)]*\)$", "", term)
        name = short if re.search(r"[A-Z]{2}", short) else short.lower()
        template = rng.choice(("What is {t}?", "What does {t} mean?", "How is {t} defined?"))
        asked.append((template.format(t=name), unit, chunk.pdf))
    vectors = embed([q for q, _, _ in asked], batch_size=EMBED_BATCH)
    for (question, unit, pdf), vector in zip(asked, vectors):
        out.append(Group(question, (unit, *_negatives(rng, vector, unit, units, unit_vectors, negatives)),
                         "definitions", pdf))

    by_title: dict[str, list[dict]] = defaultdict(list)
    for row in fdaqa:
        by_title[row["title"]].append(row)
    sentences = {id(r): [u for u in sentence_units(r["answer"]) if len(u.split()) >= 6] for r in fdaqa}
    vectors = embed([r["question"] for r in fdaqa], batch_size=EMBED_BATCH)
    every = sorted({u for r in fdaqa for u in sentences[id(r)]})
    every_vectors = embed(every, batch_size=EMBED_BATCH)
    index = {t: i for i, t in enumerate(every)}
    for row, vector in zip(fdaqa, vectors):
        positive = _first_substantive(row["answer"])
        if not positive:
            continue
        own = set(sentences[id(row)])
        siblings = sorted({u for other in by_title[row["title"]] if other is not row for u in sentences[id(other)]}
                          - own)
        if not siblings:
            continue
        found = _negatives(rng, vector, positive, siblings, every_vectors[[index[t] for t in siblings]],
                           negatives - 2, exclude=own)
        found += _negatives(rng, vector, positive, units, unit_vectors, 2)
        out.append(Group(row["question"], (positive, *found), "fdaqa", f"fdaqa:{row['title']}"))
    return out
