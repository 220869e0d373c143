"""Labelled (question, text) pairs for the relevance model, by source. Label 1: the text answers the question.

Every source is meant to teach something the others do not; ``citestream model train --sources ...`` trains on a
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
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.text_units import content_terms, file_name_words, sentence_units, words
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


# ---------------------------------------------------------------- the whole set


def corpus_acronyms(chunks: Sequence[CorpusChunk]) -> dict[str, str]:
    from ..qa.retrieve.acronyms import build_map

    texts: dict[str, list[str]] = defaultdict(list)
    for c in chunks:
        texts[c.pdf].append(c.text)
    mapping = build_map({pdf: " ".join(t) for pdf, t in texts.items()})
    return dict(mapping.long_of)


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
