"""Supervision the team wrote over ``../shared/training-docs`` (training-data/written/, its DATASHEET.md): questions
labelled against the units of their passage, and claims about a unit.

Items name units by the text they had when they were written; the parser may cut a document differently since
(ingest's sentence rules change), so each item is aligned again to the units of the document as parsed now:
the unit holding the same words, else the one that shares most of them, within a few passages of where it was.
An answerable question whose answering unit cannot be found any more is left out, never guessed.

The split is by document (``split.json``): no item of a dev or test document is trained on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.text_units import Unit, read_units, words
from ..ingest.pipeline import from_pdf, plan_chunks

DATA_DIR = Path(__file__).resolve().parents[2] / "training-data" / "written"
PAGE_REACH = 1
"""How many pages either side of its page an item's unit is looked for: the parser may cut passages anew (their
numbers move), but a unit stays on its page or the next (a sentence a page break cut is completed there)."""
MIN_OVERLAP = 0.6


@dataclass(frozen=True)
class Passage:
    doc: str
    index: int
    page: int
    units: tuple[Unit, ...]


@dataclass
class Document:
    file: str
    issuer: str
    passages: list[Passage]

    def window(self, index: int, reach: int = 2) -> list[tuple[int, Unit]]:
        """The units of passages ``index - reach`` … ``index + reach``, each with its passage."""
        lo, hi = max(0, index - reach), min(len(self.passages), index + reach + 1)
        return [(p.index, u) for p in self.passages[lo:hi] for u in p.units]

    def on_pages(self, page: int, reach: int = PAGE_REACH) -> list[tuple[int, Unit]]:
        """The units of the passages on pages ``page - reach`` … ``page + reach``, each with its passage."""
        return [(p.index, u) for p in self.passages if abs(p.page - page) <= reach for u in p.units]


@dataclass
class WrittenQuestion:
    id: str
    doc: str
    passage: int
    page: int
    question: str
    style: str
    answerable: bool
    kind: str | None
    answer_texts: list[str]
    related_texts: list[str]
    answer_phrase: str = ""
    premise: str = ""
    answer_pages: list[int] = field(default_factory=list)
    answers: list[tuple[int, Unit]] = field(default_factory=list)   # aligned now
    related: list[tuple[int, Unit]] = field(default_factory=list)
    answer_texts_found: int = 0  # of ``answer_texts``: two of them may now be one unit ("... the Ph." | "Eur., ...")


@dataclass
class WrittenClaim:
    id: str
    doc: str
    claim: str
    kind: str
    label: str
    unit_text: str
    passage: int
    page: int
    unit: tuple[int, Unit] | None = None


def load_split(folder: Path = DATA_DIR) -> dict[str, str]:
    """Document file → ``train`` / ``dev`` / ``test``."""
    split = json.loads((folder / "split.json").read_text())
    return {doc: part for part, docs in split["documents"].items() for doc in docs}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def load_questions(folder: Path = DATA_DIR) -> list[WrittenQuestion]:
    return [WrittenQuestion(
        id=r["id"], doc=r["doc"], passage=r["passage"], page=r["page"], question=r["question"], style=r["style"],
        answerable=r["answerable"], kind=r.get("kind"), answer_texts=r["answer_texts"],
        related_texts=r["related_texts"], answer_phrase=r.get("answer_phrase", ""), premise=r.get("premise", ""),
        answer_pages=r.get("answer_pages", []))
        for r in _rows(folder / "questions.jsonl")]


def load_claims(folder: Path = DATA_DIR) -> list[WrittenClaim]:
    return [WrittenClaim(id=r["id"], doc=r["doc"], claim=r["claim"], kind=r["kind"], label=r["label"],
                         unit_text=r["unit_text"], passage=r["passage"], page=r["page"])
            for r in _rows(folder / "claims.jsonl")]


def parse_documents(root: Path, files: Sequence[str], issuers: dict[str, str] | None = None) -> dict[str, Document]:
    """Each file as the ingest parser cuts it now: passages (child chunks) and their quotable units."""
    out = {}
    for file in files:
        doc = from_pdf(root / file, roots=[root])
        children, _ = plan_chunks(doc)
        out[file] = Document(file, (issuers or {}).get(file, doc.authority),
                             [Passage(file, i, c.page, read_units(c.text)) for i, c in enumerate(children)])
    return out


def _key(text: str) -> tuple[str, ...]:
    return tuple(words(text))


CONTAINED = 0.95
"""How well a unit that holds ``text`` whole, word for word, matches it (a list item written against the parser
before lists were kept whole, ingest-11): better than any unit sharing less."""
WITHIN = 0.9
"""How well a unit held whole, word for word, inside ``text`` matches it when it has at least a third of its words
(items a symbol font's bullets now set apart, ingest-14: "... for the software. · The data and ...")."""


def find_unit(document: Document, text: str, page: int) -> tuple[int, Unit] | None:
    """The unit of ``document`` within ``PAGE_REACH`` pages of ``page`` that is ``text``: the same words, else the one
    holding them whole, else the one holding the largest share (at least ``MIN_OVERLAP``) of them and of its own, on
    the nearest page on a tie."""
    wanted = _key(text)
    if not wanted:
        return None
    whole = f" {' '.join(wanted)} "
    pages = {p.index: p.page for p in document.passages}
    best, best_score = None, MIN_OVERLAP
    for passage, unit in document.on_pages(page):
        have = _key(unit.quote)
        if have == wanted:
            return passage, unit
        shared = len(set(have) & set(wanted))
        score = min(shared / len(set(wanted)), shared / max(1, len(set(have))))
        if whole in f" {' '.join(have)} ":  # an item now inside its lead-in's list unit
            score = max(score, CONTAINED)
        elif 3 * len(have) >= len(wanted) and f" {' '.join(have)} " in whole:  # a run-on now cut into its items
            score = max(score, WITHIN)
        if score > best_score or (score == best_score and best is not None
                                  and abs(pages[passage] - page) < abs(pages[best[0]] - page)):
            best, best_score = (passage, unit), score
    return best


def align_questions(questions: Sequence[WrittenQuestion], documents: dict[str, Document]) -> list[WrittenQuestion]:
    """The questions whose units are found in the documents as parsed now (each unit found at most once), with
    ``passage`` moved to where the first of them is now; an answerable question with none of its answering units
    left is dropped."""
    kept = []
    for q in questions:
        document = documents.get(q.doc)
        if document is None:
            continue
        pages = q.answer_pages or [q.page]
        q.answers, q.answer_texts_found = _found(document, q.answer_texts, pages)
        answering = {id(u) for _, u in q.answers}
        q.related = [pu for pu in _found(document, q.related_texts, [q.page])[0] if id(pu[1]) not in answering]
        if q.answerable and not q.answers:
            continue
        if q.answers or q.related:
            q.passage = (q.answers or q.related)[0][0]
        kept.append(q)
    return kept


def align_claims(claims: Sequence[WrittenClaim], documents: dict[str, Document]) -> list[WrittenClaim]:
    kept = []
    for c in claims:
        document = documents.get(c.doc)
        c.unit = find_unit(document, c.unit_text, c.page) if document else None
        if c.unit is not None:
            kept.append(c)
    return kept


def _found(document: Document, texts: Sequence[str], pages: Sequence[int]) -> tuple[list[tuple[int, Unit]], int]:
    """Each text's unit, looked for around each of ``pages`` in turn (the answering units' pages), each unit once;
    and how many of the texts found one (two texts cut apart by an older parser may now be one unit)."""
    out: list[tuple[int, Unit]] = []
    found = 0
    for text in texts:
        hit = next((h for p in dict.fromkeys(pages) if (h := find_unit(document, text, p)) is not None), None)
        found += hit is not None
        if hit is not None and all(hit[1] is not u for _, u in out):
            out.append(hit)
    return out, found
