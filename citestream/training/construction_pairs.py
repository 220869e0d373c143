"""Pairs built on answerable ones (sources ``authority``, ``premise``, ``offtopic``): the question moved to
another regulator, narrowed by a qualifier the text never mentions, built on a false premise, or off the topic."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..core.text_units import content_terms, file_name_words
from .corpus import CorpusChunk, informative
from .pairs import Pair, _lower_first, _overlap, changed_number, flipped


# ---------------------------------------------------------------- constructions on answerable pairs

OTHER_AUTHORITIES = ("the EMA", "Health Canada", "the MHRA", "Japan's PMDA", "the WHO", "the European Commission",
                     "Australia's TGA", "EU GMP", "China's NMPA", "Swissmedic", "ANVISA", "the European Union")
_AUTHORITY_FORMS = ("According to {x}, {q}", "Under {x} rules, {q}", "{qs} under {x} requirements?",
                    "What does {x} say: {q}", "In {x} guidance, {q}")


def _ich_code(pdf: str) -> str | None:
    """'Q8_R2_Pharmaceutical.pdf' → 'Q8(R2)'; 'Q9_Guideline.pdf' → 'Q9'."""
    m = re.search(r"\b(Q\d+)(?: (R\d))?\b", file_name_words(pdf))
    return (f"{m.group(1)}({m.group(2)})" if m.group(2) else m.group(1)) if m else None


def authority_pairs(positives: Sequence[Pair], chunks_by_text: dict[str, CorpusChunk],
                    rng: random.Random) -> list[Pair]:
    out: list[Pair] = []
    for pair in positives:
        chunk = chunks_by_text.get(pair.text)
        if chunk is None:
            continue
        q = pair.question
        if chunk.authority == "FDA":
            other = rng.choice(OTHER_AUTHORITIES)
            if re.search(r"\bFDA\b", q):
                moved = re.sub(r"\b(?:the )?FDA('s)?\b", lambda m: other + (m.group(1) or ""), q, count=1)  # noqa: B023
            else:
                moved = rng.choice(_AUTHORITY_FORMS).format(x=other, q=_lower_first(q), qs=q.rstrip("?. "))
            own = f"According to {rng.choice(('FDA', 'the FDA'))}, {_lower_first(q)}"
        elif chunk.authority == "ICH":
            code = _ich_code(chunk.pdf)
            own = f"According to ICH {code}, {_lower_first(q)}" if code else f"Under ICH guidance, {_lower_first(q)}"
            moved = None
        else:
            continue
        out.append(Pair(own, pair.text, 1, "authority", pair.kind, pair.group))
        if moved:
            out.append(Pair(moved, pair.text, 0, "authority", pair.kind, pair.group))
    return out


QUALIFIERS = ("for veterinary drugs", "for medical devices", "for cosmetics", "for dietary supplements",
              "for blood and plasma products", "for cell and gene therapies", "for radiopharmaceuticals",
              "for homeopathic products", "for compounded drugs", "for tobacco products", "for food additives",
              "in the 2024 revision", "when submitted by fax", "for clinical trials in Japan",
              "for vaccines given to animals", "for herbal remedies", "for contact lenses",
              "when the sponsor is a hospital pharmacy", "under the blockchain audit rule",
              "for nutritional infant formula")


def premise_pairs(positives: Sequence[Pair], rng: random.Random) -> list[Pair]:
    out: list[Pair] = []
    for pair in positives:
        qualifier = rng.choice(QUALIFIERS)
        if content_terms(qualifier) & content_terms(pair.text) or not pair.question.endswith("?"):
            continue
        narrowed = f"{pair.question.rstrip('?').rstrip()} {qualifier}?"
        out.append(Pair(narrowed, pair.text, 0, "premise", pair.kind, pair.group))
    return out


PREMISE_FORMS = ("Why {s}?", "Since {s}, what does that mean for applicants?", "Given that {s}, how should a sponsor "
                 "proceed?", "I read that {s}. What is the reason for that?", "What is the rationale for the rule that "
                 "{s}?", "Because {s}, what do we need to submit?")


def false_premise_pairs(chunks: Sequence[CorpusChunk], rng: random.Random, n: int) -> list[Pair]:
    """Questions presupposing a falsified corpus sentence, against that sentence and its chunk (0)."""
    units = [(u, c) for c in chunks for u in c.units if informative(u, 8, 40)]
    out: list[Pair] = []
    for unit, chunk in rng.sample(units, min(n, len(units))):
        wrong = changed_number(unit, rng) if rng.random() < 0.4 else None
        wrong = wrong or flipped(unit)
        if not wrong or wrong == unit:
            continue
        clause = _lower_first(wrong.rstrip(" .;:"))
        q = rng.choice(PREMISE_FORMS).format(s=clause)
        out += [Pair(q, unit, 0, "premise", "sentence", chunk.pdf), Pair(q, chunk.text, 0, "premise", "passage",
                                                                         chunk.pdf)]
    return out


def offtopic_pairs(questions: Sequence[str], chunks: Sequence[CorpusChunk], rng: random.Random) -> list[Pair]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    matrix = vectorizer.fit_transform([c.text for c in chunks])
    scores = (vectorizer.transform(questions) @ matrix.T).toarray()
    out: list[Pair] = []
    for q, row in zip(questions, scores):
        for index in (int(row.argmax()), rng.randrange(len(chunks))):
            chunk = chunks[index]
            out.append(Pair(q, chunk.text, 0, "offtopic", "passage", chunk.pdf))
            units = [u for u in chunk.units if informative(u, 6)]
            if units:
                out.append(Pair(q, max(units, key=lambda u: _overlap(q, u)), 0, "offtopic", "sentence", chunk.pdf))
    return out
