"""Golden items and the phrase matching every check shares (the set checker, the scorer)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..config import PROJECT_ROOT

GOLDEN_DIR = PROJECT_ROOT / "tests" / "golden"
BASELINE_SET = GOLDEN_DIR / "golden_set.jsonl"
PERTURB_SET = GOLDEN_DIR / "golden_set_perturb.jsonl"
DEV_SET = GOLDEN_DIR / "qa_v2_dev.jsonl"
TEST_SET = GOLDEN_DIR / "qa_v2_test.jsonl"
DEFAULT_SETS = (DEV_SET, TEST_SET, BASELINE_SET, PERTURB_SET)


def blind(name: str) -> bool:
    """A held-out test split: reported in aggregate only, never item by item (it must not be tuned to)."""
    return name.endswith("_test")

Category = Literal["fact", "number", "time_limit", "definition", "list", "yes_no", "exclusion", "multi_fact",
                   "out_of_domain", "near_miss", "wrong_authority", "false_premise"]
UNANSWERABLE_CATEGORIES = frozenset({"out_of_domain", "near_miss", "wrong_authority", "false_premise"})
Perturbation = Literal["paraphrase", "typos", "casing_punctuation", "acronym_expansion", "verbose_preamble",
                       "negated_context", "targeted_expansion", "synonyms", "acronym_contraction"]


class PageRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pdf: str
    page: int = Field(ge=1, description="1-based physical page index of the PDF")


class GoldenItem(BaseModel):
    """One question with where its answer is stated (or, unanswerable, why it is not)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    answerable: bool
    scope: Literal["MIXED", "FDA", "EMA", "ICH", "SOPS"]
    category: Category
    expected: list[PageRef] = Field(default_factory=list)
    must_contain_any: list[str] = Field(default_factory=list)
    absent_terms: list[str] = Field(default_factory=list, description="Unanswerable: terms no corpus page holds")
    source_id: str | None = Field(None, description="Perturbations: the golden item perturbed")
    perturbation: Perturbation | None = None
    kind: Literal["direct", "reworded"] | None = Field(
        None, description="qa-v2 sets: asked in the documents' words, or reworded (typos, synonyms, acronyms)")
    must_contain_all: list[list[str]] = Field(
        default_factory=list, description="Answers that need several facts: one phrase of every group")
    related: list[PageRef] = Field(
        default_factory=list, description="Near misses: pages holding the related clause that does not answer")
    style: Literal["direct", "reworded", "typo", "acronym", "background", "scenario"] | None = Field(
        None, description="Sets made from the written supervision (training-data/written): how the question was asked")

    @property
    def expected_pages(self) -> set[tuple[str, int]]:
        return {(ref.pdf, ref.page) for ref in self.expected}


def load_set(path: str | Path) -> list[GoldenItem]:
    """Every item of a JSONL golden set; blank lines skipped, ids must be unique."""
    items = [GoldenItem.model_validate_json(line) for line in Path(path).read_text().splitlines() if line.strip()]
    ids = [item.id for item in items]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate ids {duplicates}")
    return items


def set_name(path: str | Path) -> str:
    return Path(path).name.removesuffix(".jsonl")


_SOFT_BREAKS = re.compile("[\u00ad\ufffe\ufeff\u200b]")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def phrase_key(text: str) -> str:
    """Lower-case letters and digits only, so PDF line breaks, hyphenation and spacing never decide a match.

    "sustained-\\nrelease", "sustained\\ufffe release" and "sustained release" all
    become "sustainedrelease"; a phrase matches when its key is a substring.
    """
    text = _SOFT_BREAKS.sub("", unicodedata.normalize("NFKC", text)).lower()
    return _NON_ALNUM.sub("", text)


def word_key(text: str) -> str:
    """Lower-case words separated by single spaces (hyphens and line breaks become spaces): for whole-word search."""
    text = _SOFT_BREAKS.sub("", unicodedata.normalize("NFKC", text)).lower()
    return " ".join(_NON_ALNUM.split(text)).strip()


def contains_phrase(text: str, phrases: list[str]) -> str | None:
    """The first phrase of ``phrases`` that occurs in ``text`` (normalised by :func:`phrase_key`), if any."""
    key = phrase_key(text)
    return next((p for p in phrases if phrase_key(p) and phrase_key(p) in key), None)
