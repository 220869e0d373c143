"""Labelled (question, text) pairs for the relevance model, by source. Label 1: the text answers the question.

Every source is meant to teach something the others do not; ``citestream scorer train --sources ...`` trains on a
subset, and ``scripts/relevance_ablation.py`` measures such models on dev (docs/relevance.md, the ablation).

* ``llm`` — questions a local LLM wrote about corpus sentences (``questions``): the sentence and its chunk
  answer (1); the chunk's other sentences, the chunk with the answering sentence removed, and the next chunk of
  the same document are on the topic but do not answer (0). Most of the answerability signal is here.
* ``fdaqa`` — 1,840 real questions FDA staff answered in 47 other guidances (``../shared/data/fda-qa``): the
  answer and its first sentence (1); other answers of the same guidance (0); the corpus chunk closest to the
  question by TF-IDF (0: the corpus does not cover those guidances; near matches are skipped).
* ``definitions`` — glossary entries and "X means ..." sentences of the corpus, asked as "What is X?" and the
  like (1); the same document's other sentences naming X, and other definitions (0).
* ``authority`` — a question moved to another regulator ("According to Health Canada, ...") against the FDA
  text that answered it (0), and the same question with its own authority named (1): whose rules were asked for
  decides.
* ``premise`` — a question narrowed by a qualifier the text never mentions ("... for veterinary drugs?") against
  the text that answered the plain question (0): an on-topic text that does not cover what was asked; and a
  question built on a false premise — a corpus sentence with its polarity flipped or a number changed, asked
  about ("Why must applicants ...?", "Since ..., how ...?") — against the very sentence it falsifies (0).
* ``claims`` — sentences the local LLM restated as claims in its own words, numbers kept, when there are any (none
  are committed): the source sentence supports its claim (1); the claim with a number changed or its polarity
  flipped does not (0), nor do the chunk's other sentences. The claims built from corpus sentences by construction
  (polarity, actor, quantity, restrictor) train a stage of their own (``claims_stage``).
* ``offtopic`` — general questions (cooking, sport, IT, ...) against the corpus text closest to them (0).
* ``noise`` — not a source: a quarter of the questions again with typos, or an acronym swapped for its long form
  (or back), same label, so reworded questions are read like direct ones.
"""

from __future__ import annotations

import csv
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..core.text_units import content_terms, sentence_units, words
from .corpus import CorpusChunk, by_position, informative, written_about

SOURCES = ("llm", "fdaqa", "definitions", "authority", "premise", "claims", "offtopic")


@dataclass(frozen=True)
class Pair:
    question: str
    text: str
    label: int
    source: str
    kind: str       # sentence | passage
    group: str      # the document (or FDA Q&A guidance) it comes from: held-out splits never share one


def _overlap(a: str, b: str) -> float:
    ta, tb = content_terms(a), content_terms(b)
    return len(ta & tb) / max(1, min(len(ta), len(tb)))


def _containment(part: str, whole: str) -> float:
    """Share of ``part``'s word 3-grams found in ``whole``."""
    grams = lambda text: {tuple(w[i:i + 3]) for w in [words(text)] for i in range(max(0, len(w) - 2))}  # noqa: E731
    mine = grams(part)
    return len(mine & grams(whole)) / len(mine) if mine else 0.0


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def _lower_first(question: str) -> str:
    """'What is ...' → 'what is ...' for embedding after a prefix; acronyms keep their case."""
    first = question.split(" ", 1)[0]
    return question if first.isupper() and len(first) > 1 else question[:1].lower() + question[1:]


# ---------------------------------------------------------------- llm


def llm_pairs(questions: Iterable[dict], chunks: Sequence[CorpusChunk], rng: random.Random) -> list[Pair]:
    by_key = by_position(chunks)
    out: list[Pair] = []
    for row in questions:
        if (found := written_about(row, by_key)) is None:
            continue
        (chunk, unit), q = found, row["question"]
        group = chunk.pdf
        out += [Pair(q, unit, 1, "llm", "sentence", group), Pair(q, chunk.text, 1, "llm", "passage", group)]
        others = [u for j, u in enumerate(chunk.units) if j != row["unit"] and informative(u, 6)
                  and _overlap(u, unit) < 0.6 and not (_numbers(unit) & _numbers(u))]
        out += [Pair(q, u, 0, "llm", "sentence", group) for u in rng.sample(others, min(3, len(others)))]
        if len(chunk.units) >= 3:
            rest = " ".join(u for j, u in enumerate(chunk.units) if j != row["unit"])
            if _containment(unit, rest) < 0.5:  # the rest does not say it again
                out.append(Pair(q, rest, 0, "llm", "passage", group))
        neighbour = by_key.get((chunk.pdf, chunk.index + rng.choice((-2, 2))))
        if neighbour is not None and _overlap(neighbour.text, unit) < 0.5:
            out.append(Pair(q, neighbour.text, 0, "llm", "passage", group))
            units = [u for u in neighbour.units if informative(u, 6)]
            if units:
                out.append(Pair(q, rng.choice(units), 0, "llm", "sentence", group))
    return out


# ---------------------------------------------------------------- claims

_FLIPS = ((r"\bmust not\b", "must"), (r"\bshould not\b", "should"), (r"\bis not\b", "is"), (r"\bare not\b", "are"),
          (r"\bdoes not\b", "does"), (r"\bmust\b", "must not"), (r"\bshould\b", "should not"),
          (r"\bis\b", "is not"), (r"\bare\b", "are not"), (r"\bcan\b", "cannot"), (r"\bmay\b", "may not"),
          (r"\brequired\b", "optional"), (r"\bbefore\b", "after"), (r"\bafter\b", "before"))


_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


def changed_number(claim: str, rng: random.Random, number: re.Pattern = _NUMBER) -> str | None:
    """``claim`` with one ``number`` match, chosen by ``rng``, changed to another value; None without a number."""
    numbers = list(number.finditer(claim))
    if not numbers:
        return None
    m = rng.choice(numbers)
    value = float(m.group(0))
    new = rng.choice([value * 2, value + rng.choice((1, 5, 10)), max(value / 2, value - 3)])
    text = f"{new:g}" if new != value else f"{value + 1:g}"
    return claim[:m.start()] + text + claim[m.end():]


def flipped(claim: str) -> str | None:
    for pattern, replacement in _FLIPS:
        if re.search(pattern, claim):
            return re.sub(pattern, replacement, claim, count=1)
    return None


def claim_pairs(claims: Iterable[dict], chunks: Sequence[CorpusChunk], rng: random.Random) -> list[Pair]:
    by_key = by_position(chunks)
    out: list[Pair] = []
    for row in claims:
        if (found := written_about(row, by_key)) is None:
            continue
        (chunk, unit), claim = found, row["question"]
        group = chunk.pdf
        if _numbers(claim) - _numbers(unit):
            continue  # the LLM changed a number: not a faithful restatement
        out += [Pair(claim, unit, 1, "claims", "sentence", group),
                Pair(claim, chunk.text, 1, "claims", "passage", group)]
        for wrong in (changed_number(claim, rng), flipped(claim)):
            if wrong and wrong != claim:
                out += [Pair(wrong, unit, 0, "claims", "sentence", group)]
        others = [u for j, u in enumerate(chunk.units) if j != row["unit"] and informative(u, 6)
                  and _overlap(u, unit) < 0.6]
        out += [Pair(claim, u, 0, "claims", "sentence", group) for u in rng.sample(others, min(2, len(others)))]
    return out


# ---------------------------------------------------------------- fdaqa

# The data set prefixes each question with the guidance's title ("As per the details in <title> , What ...");
# the question starts after the title, at the first question word that follows a comma or a double space.
_QUESTION_START = re.compile(
    r"(?:\s,\s*|,\s+|\s{2,}|\s)(?=(?:What|How|Can|Could|Does|Do|Did|Is|Are|Should|May|Must|When|Where|Which|Who|"
    r"Whom|Why|If|My|Our|We|I|Has|Have|Will|Would|Am|Under|For|In|At|Please|To|Since|Section|Some|A|An|The)\b)")
_PREFIXED = re.compile(r"^(?:Guideline title:|As |According to|Drawing|Given|Upon|In light|Looking|This question|"
                       r"Having|Referring|Based on|Delving|With reference|After reviewing|Taking into|From what|"
                       r"In accordance|Considering|When considering|In the context|Regarding|Per |Under the )")


def strip_title(question: str) -> str:
    """The question without the data set's "<intro> <guidance title>," prefix."""
    if not _PREFIXED.match(question):
        return question
    for m in _QUESTION_START.finditer(question, 12):
        rest = question[m.end():]
        if len(rest.split()) >= 4 and (m.group(0).strip() == "," or "  " in m.group(0) or "?" in rest):
            return rest
    return question


def fdaqa_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    out = []
    for row in rows:
        question = " ".join(strip_title(" ".join(row["Question"].split(" "))).split())
        answer = " ".join(row["Answer"].split())
        if 4 <= len(question.split()) <= 80 and len(answer.split()) >= 6:
            out.append({"title": row["Title"], "question": question, "answer": answer})
    return out


def _first_substantive(answer: str) -> str | None:
    for unit in sentence_units(answer)[:3]:
        if len(unit.split()) >= 6:
            return unit
    return None


def fdaqa_pairs(rows: Sequence[dict], chunks: Sequence[CorpusChunk], rng: random.Random) -> list[Pair]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    by_title: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_title[row["title"]].append(row)
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2)
    corpus_matrix = vectorizer.fit_transform([c.text for c in chunks])
    questions = vectorizer.transform([r["question"] for r in rows])
    answers = vectorizer.transform([r["answer"] for r in rows])
    nearest = (questions @ corpus_matrix.T).toarray().argmax(axis=1)
    out: list[Pair] = []
    for i, row in enumerate(rows):
        q, group = row["question"], f"fdaqa:{row['title']}"
        passage = row["answer"][:1500]
        out.append(Pair(q, passage, 1, "fdaqa", "passage", group))
        first = _first_substantive(row["answer"])
        if first:
            out.append(Pair(q, first, 1, "fdaqa", "sentence", group))
        siblings = [r for r in by_title[row["title"]] if r is not row and _overlap(r["answer"], row["answer"]) < 0.5]
        for other in rng.sample(siblings, min(1, len(siblings))):
            out.append(Pair(q, other["answer"][:1500], 0, "fdaqa", "passage", group))
            unit = _first_substantive(other["answer"])
            if unit:
                out.append(Pair(q, unit, 0, "fdaqa", "sentence", group))
        chunk = chunks[nearest[i]]
        if (answers[i] @ corpus_matrix[nearest[i]].T).toarray()[0, 0] < 0.3:  # the corpus does not state the answer
            out.append(Pair(q, chunk.text, 0, "fdaqa", "passage", group))
            units = [u for u in chunk.units if informative(u, 6)]
            if units:
                out.append(Pair(q, max(units, key=lambda u: _overlap(q, u)), 0, "fdaqa", "sentence", group))
    return out


# ---------------------------------------------------------------- definitions

_GLOSSARY = re.compile(r"^(?P<term>[A-Z][A-Za-z\-/]*(?: [A-Za-z][A-Za-z\-/]*){0,5}(?: \([A-Za-z0-9\-/]+\))?):\s+"
                       r"(?:The|A|An|Any|All)\s")
_MEANS = re.compile(r"^(?:The term )?(?P<term>[A-Z]?[a-z][\w\-]*(?: [\w\-]+){0,4}) (?:means|is defined as|refers to)\s")
_NOT_TERMS = {"figure", "table", "example", "appendix", "summary", "comments", "comment", "note", "notes", "fax",
              "email", "e-mail", "phone", "contact", "section", "reference", "references", "this", "it", "that"}
_TEMPLATES = ("What is {a} {t}?", "What does {t} mean?", "How is {t} defined?", "What is meant by {t}?",
              "Define {t}.", "what's the definition of {t}?", "Can you explain what {t} is?")


def definition_units(chunks: Sequence[CorpusChunk]) -> list[tuple[str, str, CorpusChunk]]:
    """(term, defining unit, chunk) for glossary entries and "X means ..." sentences."""
    out = []
    for chunk in chunks:
        for unit in chunk.units:
            m = _GLOSSARY.match(unit) or _MEANS.match(unit)
            if not m:
                continue
            term = m.group("term").strip()
            if term.split()[0].lower() in _NOT_TERMS or re.search(r"\d", term) or len(unit.split()) < 6:
                continue
            out.append((term, unit, chunk))
    return out


def definition_pairs(chunks: Sequence[CorpusChunk], rng: random.Random) -> list[Pair]:
    defs = definition_units(chunks)
    out: list[Pair] = []
    for term, unit, chunk in defs:
        short = re.sub(r"\s*\([^)]*\)$", "", term)
        name = short if short.isupper() else short.lower() if not re.search(r"[A-Z]{2}", short) else short
        for template in rng.sample(_TEMPLATES, 2):
            q = template.format(t=name, a="an" if name[:1].lower() in "aeiou" else "a")
            out += [Pair(q, unit, 1, "definitions", "sentence", chunk.pdf),
                    Pair(q, chunk.text, 1, "definitions", "passage", chunk.pdf)]
            mentions = [u for c in chunks if c.pdf == chunk.pdf for u in c.units
                        if u != unit and short.lower() in u.lower() and informative(u, 6)]
            out += [Pair(q, u, 0, "definitions", "sentence", chunk.pdf)
                    for u in rng.sample(mentions, min(2, len(mentions)))]
            other = rng.choice(defs)
            if other[0] != term:
                out.append(Pair(q, other[1], 0, "definitions", "sentence", chunk.pdf))
    return out
