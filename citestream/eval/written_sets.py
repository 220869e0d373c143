"""The unseen-documents sets: the written questions of the dev and test documents of training-data/written (split
by document, never trained on) as golden items, asked against the corpus with those documents ingested beside it.
``calibration`` is a second set of questions on the dev documents (batch 4, ``questions-calibration.jsonl``),
written to the same guidelines and never trained on: more answers on documents the judges never saw, for choosing
the High label's rule (docs/relevance.md).

An answerable item expects a citation on a page of one of its answering units and the writer's answer phrase in
the answer; an unanswerable one expects the refusal. Made by ``python -m citestream.eval.written_sets`` into
tests/golden/qa_docs_{dev,test,calibration}.jsonl; a test checks the committed files are what the written data
makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import json

from ..config import PROJECT_ROOT
from .sets import GOLDEN_DIR, GoldenItem, PageRef

DATA_DIR = PROJECT_ROOT / "training-data" / "written"
"""Read as plain JSON lines here: the training package reads the same files for training (``training.written``),
and the two packages do not import each other (docs/layering.md)."""


def _rows(name: str, folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines() if line.strip()]


def _documents(part: str, folder: Path) -> set[str]:
    return set(json.loads((folder / "split.json").read_text())["documents"][part])

CATEGORY = {"near_miss_value": "near_miss", "near_miss_actor": "near_miss", "near_miss_condition": "near_miss",
            "false_premise": "false_premise", "other_authority": "wrong_authority"}
PERTURBATION = {"reworded": "paraphrase", "typo": "typos", "acronym": "acronym_expansion",
                "background": "verbose_preamble", "scenario": "verbose_preamble"}


SOURCES = {"dev": ("dev", "questions.jsonl"), "test": ("test", "questions.jsonl"),
           "calibration": ("dev", "questions-calibration.jsonl")}
"""Each set: the split whose documents it asks about, and the file of written questions it reads."""


def written_items(part: str, folder: Path = DATA_DIR) -> list[GoldenItem]:
    split, source = SOURCES[part]
    documents = _documents(split, folder)
    items = []
    for q in _rows(source, folder):
        if q["doc"] not in documents:
            continue
        answerable = q["answerable"]
        items.append(GoldenItem(
            id=q["id"], question=q["question"], answerable=answerable, scope="MIXED",
            category="fact" if answerable else CATEGORY[q["kind"]],
            expected=[PageRef(pdf=q["doc"], page=p) for p in q["answer_pages"]] if answerable else [],
            must_contain_any=[q["answer_phrase"]] if answerable else [],
            kind="direct" if q["style"] == "direct" else "reworded", perturbation=PERTURBATION.get(q["style"]),
            style=q["style"]))
    return sorted(items, key=lambda i: i.id)


def written_claims(part: str, folder: Path = DATA_DIR) -> list[dict]:
    """The claims about units of the ``part`` documents, in the claims sets' form (``eval.claims``)."""
    documents = _documents(part, folder)
    return [{"id": c["id"], "claim": c["claim"], "label": c["label"], "construction": c["kind"], "pdf": c["doc"],
             "page": c["page"], "source_text": c["unit_text"]}
            for c in sorted(_rows("claims.jsonl", folder), key=lambda c: c["id"]) if c["doc"] in documents]


def write(part: str, out_dir: Path = GOLDEN_DIR) -> list[Path]:
    questions = out_dir / f"qa_docs_{part}.jsonl"
    questions.write_text("".join(item.model_dump_json(exclude_none=True, exclude_defaults=True) + "\n"
                                 for item in written_items(part)))
    if part == "calibration":  # questions only
        return [questions]
    claims = out_dir / f"claims_docs_{part}.jsonl"
    claims.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in written_claims(part)))
    return [questions, claims]


if __name__ == "__main__":
    for part in sys.argv[1:] or tuple(SOURCES):
        print(*write(part))
