"""The judge's groups from the written supervision, split by document: train groups from the training documents
only, dev groups from the dev documents (for choosing a step and a threshold), none from the test documents.

Questions are read as the answer flow reads them (``qa.retrieve.reading.read_question``: spelling and acronyms
against a lexicon of the documents, the asking sentence apart from the background), so the judge learns on the
text it will be given. Distant negatives are the units the relevance embedder ranks closest to the question
outside its passage's window, in the documents of the same part of the split: what retrieval hands the judge.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.text_units import Unit
from ..qa.retrieve.lexicon import build_lexicon
from ..qa.retrieve.reading import read_question
from .judge import Group, JudgeConfig, claim_groups, question_groups
from .written import (DATA_DIR, Document, WrittenQuestion, align_claims, align_questions, load_claims,
                      load_questions, load_split, parse_documents)

DISTANT_POOL = 12


@dataclass
class JudgeData:
    train: list[Group]
    dev: list[Group]
    dev_claims: list[Group]
    counts: dict


def _document_text(document: Document) -> str:
    return " ".join(u.quote for p in document.passages for u in p.units)


def reader_for(documents: dict[str, Document], with_background: bool = False):
    """The question as the flow reads it against a lexicon of ``documents`` (its asking sentence; with
    ``with_background``, its background first, as the background judge reads it)."""
    lexicon = build_lexicon({name: _document_text(d) for name, d in documents.items()})
    return lambda question: read_question(question, lexicon, with_background).asked


def distant_units(questions: list[WrittenQuestion], documents: dict[str, Document], read, embed,
                  pool: int = DISTANT_POOL) -> dict[str, list[Unit]]:
    """Per question, the ``pool`` units closest to its reading (relevance embedder cosine) among ``documents``,
    leaving out the window of its own passage."""
    units = [(name, p.index, u) for name, d in documents.items() for p in d.passages for u in p.units]
    if not units or not questions:
        return {}
    unit_vectors = np.asarray(embed([u.quote for _, _, u in units]), dtype=np.float32)
    question_vectors = np.asarray(embed([read(q.question) for q in questions]), dtype=np.float32)
    out = {}
    for q, v in zip(questions, question_vectors):
        # Ranked on scores rounded to 1e-5, stable: two builds must give the same groups (the checkpoint's key is
        # their hash), and repeated units (a running header on every page) differ only in the last bits.
        ranked = np.argsort(-np.round(unit_vectors @ v, 5), kind="stable")
        picked = []
        for i in ranked:
            name, passage, unit = units[i]
            if name == q.doc and abs(passage - q.passage) <= 2:
                continue
            picked.append(unit)
            if len(picked) == pool:
                break
        out[q.id] = picked
    return out


def judge_data(root: Path, config: JudgeConfig, embed, folder: Path = DATA_DIR,
               parts: tuple[str, ...] = ("train",)) -> JudgeData:
    """Groups to train on (documents of ``parts`` of the split) and the dev documents' groups to evaluate on."""
    split = load_split(folder)
    wanted = {doc for doc, part in split.items() if part in parts}
    dev_docs = {doc for doc, part in split.items() if part == "dev"}
    documents = parse_documents(root, sorted(wanted | dev_docs))
    questions = align_questions([q for q in load_questions(folder) if q.doc in wanted | dev_docs], documents)
    claims = align_claims([c for c in load_claims(folder) if c.doc in wanted | dev_docs], documents)
    rng = random.Random(config.seed)
    # Sorted, never a set's order: a set of names iterates in the process's hash order, which ordered the units
    # that tie (one text in several documents) differently in each run, and so the groups and the checkpoint key.
    train, dev = {d: documents[d] for d in sorted(wanted)}, {d: documents[d] for d in sorted(dev_docs)}
    read_train, read_dev = reader_for(train, config.read_background), reader_for(dev, config.read_background)
    train_questions = [q for q in questions if q.doc in wanted]
    dev_questions = [q for q in questions if q.doc in dev_docs]
    groups = question_groups(train_questions, documents, read_train,
                             distant_units(train_questions, train, read_train, embed), config, rng)
    groups += claim_groups([c for c in claims if c.doc in wanted], documents, config, rng)
    dev_groups = question_groups(dev_questions, documents, read_dev,
                                 distant_units(dev_questions, dev, read_dev, embed), config, random.Random(1))
    dev_claims = claim_groups([c for c in claims if c.doc in dev_docs], documents, config, random.Random(1))
    counts = {"train_questions": len(train_questions), "train_claims": sum(c.doc in wanted for c in claims),
              "dev_questions": len(dev_questions), "dev_claims": len(dev_claims),
              "written_questions": len(load_questions(folder)), "written_claims": len(load_claims(folder))}
    return JudgeData(groups, dev_groups, dev_claims, counts)
