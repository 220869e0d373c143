"""General-domain groups for the judge: SQuAD 2.0 dev (``../shared/public-qa``) in the judge's form (issue 52).

Why: the judge's dev misses are mostly a neighbour preferred to the answering sentence, or no sentence trusted
(docs/experiments/2026-11-29-transfer.md). A SQuAD 2.0 paragraph is exactly that choice: its sentences are the
neighbours, the one holding the answer span answers, and an unanswerable question's sentences, all on its topic,
answer none. 11,873 questions against 3,199 written ones, on text no product document resembles, so it teaches the
choice, not the domain's words.

QNLI dev is not used: its questions are SQuAD 1.1 dev's, the same articles as SQuAD 2.0 dev, one sentence each.
PubMedQA is not used: a yes / no / maybe verdict over an abstract names no answering sentence.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ..core.text_units import sentence_units
from .judge import Group

SQUAD_FILE = "squad2/dev-v2.0.reconstructed-from-explorer.json"


def _spans(context: str) -> list[tuple[int, int, str]] | None:
    """Each sentence unit with where it stands in the paragraph; None when a unit is not found verbatim in order
    (the splitter rewrote it), so the answer's offset cannot be placed."""
    spans, at = [], 0
    for unit in sentence_units(context):
        start = context.find(unit, at)
        if start < 0:
            return None
        spans.append((start, start + len(unit), unit))
        at = start + len(unit)
    return spans


def _answering(context: str, spans: list[tuple[int, int, str]], answers: list[dict]) -> set[int]:
    """The units holding an answer span whole, placed by its offset (by its first occurrence when the offset does
    not hold its text: the rebuilt file's offsets are sometimes the first occurrence's)."""
    found = set()
    for answer in answers:
        text, start = answer["text"], answer["answer_start"]
        if context[start:start + len(text)] != text:
            start = context.find(text)
        if start < 0:
            continue
        found |= {i for i, (s, e, _) in enumerate(spans) if s <= start and start + len(text) <= e}
    return found


def squad_groups(root: Path, n: int, seed: int, max_units: int = 16) -> list[Group]:
    """``n`` questions of SQuAD 2.0 dev drawn at random (about half unanswerable, as in the file), each with its
    paragraph's sentence units; a question whose answer no whole unit holds, or whose paragraph has one unit, is
    left out."""
    data = json.loads((root / SQUAD_FILE).read_text())
    rng = random.Random(seed)
    out = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            spans = _spans(context)
            if spans is None or len(spans) < 2:
                continue
            for qa in paragraph["qas"]:
                answering = set() if qa["is_impossible"] else _answering(context, spans, qa["answers"])
                if not qa["is_impossible"] and not answering:
                    continue
                keep = sorted(answering) + [i for i in range(len(spans)) if i not in answering]
                keep = sorted(keep[:max_units])
                out.append(Group(f"squad:{qa['id']}", qa["question"], tuple((spans[i][2],) for i in keep),
                                 tuple(j for j, i in enumerate(keep) if i in answering), "transfer"))
    return rng.sample(out, min(n, len(out)))
