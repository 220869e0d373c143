"""The default backend: deterministic, offline, and unable to invent text.

It reads the evidence blocks and the question back out of the prompt it is
given (the same bytes a hosted model gets) and answers in the Phase C JSON
with source sentences copied verbatim, each followed by its own marker.

How it picks sentences (general rules, no list of known questions):

* a question term counts by how rare it is across the evidence sentences
  (inverse document frequency), so "lecanemab" outweighs "drug"; a question
  term found nowhere in the evidence counts as much as the commonest term
  that is found (it lowers coverage without outweighing the subject);
* a sentence scores the weighted share of question terms it covers, also
  counting the sentence just before it (the subject is often named there);
* the question's answer type, when it has one, is preferred: a time question
  (when, by when, how soon, how quickly, deadline, ...) prefers a sentence that
  states a duration or a date ("within 14 days", "August 20, 1997"); a quantity
  question (how much, how many, what percentage, ...) one that states a number;
  a definition question (define, definition, what does X mean, what is a/an X)
  one written as a definition of a subject term of the question ("X means",
  "X is defined as", "X: The ...", with X naming what was asked about);
  when some sentence is of that type, only such sentences answer;
* regulatory front matter ("represents the current thinking", "does not
  establish any rights", "Contains Nonbinding Recommendations", copies and
  contacts) answers no question and is skipped;
* line numbers and footnote marks a draft's text layer puts in front of a
  sentence are left out of the quote (what remains is still verbatim);
* bulleted list items count as sentences of their own; a run-on of over 80
  words (a list printed without full stops) is split after its semicolons and
  colons;
* fragments (under 5 words), run-ons still over 80 words (a table or a page
  header glued to text) and instructions aimed at a model (a prompt
  injection inside a document) are skipped;
* the best sentence must cover ``min_coverage`` of the question's weight and
  share ``min_shared_terms`` terms with it, else the reply is the refusal
  lock; further sentences must reach ``keep_ratio`` of the best score;
* a chosen sentence that ends with a colon brings the list items that follow
  it in its chunk (up to six);
* at most ``max_sentences`` sentences, one Phase C row per chunk (duplicate
  keys would be dropped by the validator), in evidence order.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from ..assembly.evidence import EvidenceBlock, parse_evidence
from ..policy import PROMPT_REFUSAL_LOCK
from ..retrieval.spelling import as_spelt_in
from ..text import DISCLAIMER, GENERIC_TERMS, STOPWORDS, file_name_words, matching_terms, split_sentences, words
from ..validation import is_injection
from .base import LLMReply

_QUANTITY_QUESTION = re.compile(
    r"\b(how (?:much|many|long|often|soon|large|high|low)|when|what (?:percentage|percent|proportion|rate|number|"
    r"year|date|dose|amount)|by how|within what|what is the (?:maximum|minimum|limit|threshold))\b",
    re.IGNORECASE,
)
_HAS_NUMBER = re.compile(r"\d")
_TIME_QUESTION = re.compile(
    r"\b(when|by when|how (?:soon|quickly|fast|long|often)|deadline|time ?frame|timeline|within what|"
    r"how many (?:days|weeks|months|years|hours))\b",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b\d+(?:\.\d+)?[\s-]*(?:\(\w+\)\s*)?(?:calendar |business |working )?"
    r"(?:days?|weeks?|months?|years?|hours?|minutes?)\b"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+\d{1,2},?\s+\d{4}\b"
    r"|\b(?:\w+ \(\d+\)|one|two|three|four|five|six|seven|eight|nine|ten|thirty|sixty|ninety) "
    r"(?:calendar |business |working )?(?:days?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
_DEFINITION_QUESTION = re.compile(
    r"\b(defin\w*|meaning of|what does .{1,60} mean|what is meant by|what (?:is|are) (?:an?|the) "
    r"|what (?:counts|qualifies) as|what is considered)",
    re.IGNORECASE,
)
_DEFINITION = re.compile(  # near the start: the defined term comes first ("Risk: The ...", "X means ...")
    r"^.{0,60}?(?:\b(?:means|is defined as|are defined as|refers? to|is the|is an?|are the)\b"
    r"|^[A-Z][\w ()/,-]{1,60}:\s)",
)
_FRONT_MATTER = re.compile(  # disclaimers, and the cross-references and contact lines around them
    rf"{DISCLAIMER.pattern}|current\s*thinking|guidance entitled|Contains Nonbinding Recommendations"
    r"|are available from|for questions (?:regarding|about) this|^see\b.{0,200}https?://|available at:? https?://",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"(?<=[;:])\s+")
_LEADING_MARKS = re.compile(r"^(?:\d{1,4}\s+)+(?=[A-Z\u201c\"(])")
ANSWER_TYPE_BOOST = 1.3
# "Which X ..." / "What X ...": X names what the answer is about, unless it is an auxiliary or an answer-type word.
_FOCUS = re.compile(r"\b(?:which|what)\s+((?:[\w()'’-]+\s+){0,3}?[\w()'’-]+)\s+"
                    r"(?=(?:is|are|was|were|does|do|did|can|could|should|must|may|might|will|would|has|have|had"
                    r"|applies|apply)\b)", re.IGNORECASE)
_NOT_FOCUS = frozenset("""is are was were does do did can could should must may might will would has have had
    kind kinds type types sort year years date dates percentage percent number amount time period day days month
    months week weeks hour hours other others situation situations circumstance circumstances case cases condition
    conditions way ways step steps reason reasons factor factors element elements item items thing things one two
    three four five six seven eight nine ten""".split())
_NOT_FOCUS_TERMS = matching_terms(" ".join(_NOT_FOCUS))
MAX_WORDS = 80  # longer pieces are run-ons: split into clauses, or skipped


_BULLET = re.compile(r"\s*[•●▪◦]\s*")


def _pieces(text: str) -> list[str]:
    """Sentences, with bulleted items as pieces of their own (PDF lists have no full stops between items).

    Leading line numbers or footnote marks are dropped: the rest is still a verbatim span of the source.
    """
    pieces = (p.strip() for sentence in split_sentences(text) for p in _BULLET.split(sentence))
    return [_LEADING_MARKS.sub("", clause) for p in pieces if p.strip() for clause in _clauses(p)]


def _clauses(piece: str) -> list[str]:
    """A run-on longer than ``MAX_WORDS`` (a list the PDF printed without full stops) split after ; and :."""
    if len(piece.split()) <= MAX_WORDS:
        return [piece]
    clauses: list[str] = []
    for clause in (c.strip() for c in _CLAUSE_END.split(piece)):
        if clauses and len(clause.split()) < 3:  # "or," / "and" left over from a list: stays with its item
            clauses[-1] = f"{clauses[-1]} {clause}"
        elif clause:
            clauses.append(clause)
    return clauses


def focus_terms(question: str) -> set[str]:
    """Content terms of the thing a which/what question asks about ("Which blockchain ledger does ..." → blockchain,
    ledger); empty when the question has no such phrase."""
    m = _FOCUS.search(question)
    if not m or m.group(1).split()[0].lower() in _NOT_FOCUS:
        return set()
    return matching_terms(m.group(1)) - _NOT_FOCUS_TERMS


def spelled_as_evidence(terms: set[str], vocabulary: set[str]) -> set[str]:
    """A question term the evidence never uses but that shares its first six letters with one evidence term
    is read as that term: a word form the light stemmer does not join ("manufacturer" / "manufacturing"), or a
    typo late in a long word. (Typos anywhere else: ``as_spelt_in``.) Dropping this for the edit
    distance rule alone changed 6 answers on the golden sets and cost one citation."""
    out = set()
    for term in terms:
        near = sorted(v for v in vocabulary if len(term) >= PREFIX and v[:PREFIX] == term[:PREFIX])
        out.add(term if term in vocabulary or len(near) != 1 else near[0])
    return out


def name_terms(pdf: str) -> set[str]:
    """Terms of a document's file name: a question naming the document ("under ICH Q9") is answered by its text."""
    return matching_terms(file_name_words(pdf))


# Questions whose answer must carry its unit: a sentence without one cannot answer them, however related.
_CURRENCY_QUESTION = re.compile(  # asks for an amount, not about a fee program
    r"\bhow much\b.{0,60}\b(?:fees?|costs?|pay|charged?|price)\b"
    r"|\bwhat (?:is|are) the (?:[\w-]+ ){0,4}(?:fees?|costs?|price)\b|\bin (?:US |U\.S\. )?(?:dollars|USD|euros?)\b",
    re.IGNORECASE)
_CURRENCY = re.compile(r"[$€£]\s?\d|\b\d[\d,.]*\s*(?:million |billion )?(?:US )?(?:dollars|USD|EUR|euros?)\b",
                       re.IGNORECASE)
_PERCENT_QUESTION = re.compile(r"\b(?:what|which) (?:\w+ ){0,3}(?:percentage|percent)\b", re.IGNORECASE)
_PERCENT = re.compile(r"\d\s*%|\bpercent\b", re.IGNORECASE)
_COUNT_QUESTION = re.compile(r"\bhow many (?:of (?:the|these|those|its|their) )?([a-z]+(?: [a-z]+)?)", re.IGNORECASE)
_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|fifty|hundred|dozen)"
_FREQUENCY_QUESTION = re.compile(r"\bhow often\b", re.IGNORECASE)
_FREQUENCY = re.compile(r"\b(?:every|each|per|annual(?:ly)?|yearly|monthly|weekly|daily|once|twice|periodic(?:ally)?"
                        r"|at least \w+ times?)\b", re.IGNORECASE)
_NOT_COUNTED = {"day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours", "minutes",
                "calendar", "business", "working", "times"}  # durations are the time rule's; "how many times": often


def required_unit(question: str):
    """A test for the unit the answer must state (an amount of money, a percentage, a count of the thing asked
    about, a frequency), or None. Unlike ``answer_type_fits``, a question with a required unit and no sentence
    stating it is refused: a related sentence without the unit is a near-miss, not an answer."""
    if _CURRENCY_QUESTION.search(question):
        return lambda sentence: bool(_CURRENCY.search(sentence))
    if _PERCENT_QUESTION.search(question):
        return lambda sentence: bool(_PERCENT.search(sentence))
    if _FREQUENCY_QUESTION.search(question):
        return lambda sentence: bool(_FREQUENCY.search(sentence))
    m = _COUNT_QUESTION.search(question)
    if m and m.group(1).split()[0].lower() not in _NOT_COUNTED | STOPWORDS:
        counted = m.group(1).split()[-1].lower()
        stem = counted[:-1] if counted.endswith("s") else counted
        near = re.compile(rf"\b{_NUMBER}\b(?:\W+\w+){{0,3}}?\W+{re.escape(stem)}", re.IGNORECASE)
        return lambda sentence: bool(near.search(sentence))
    return None


def answer_type_fits(question: str):
    """A test for sentences of the answer type the question asks for, or None when it asks for none."""
    if _TIME_QUESTION.search(question):
        return lambda sentence: bool(_TIME.search(sentence))
    if _QUANTITY_QUESTION.search(question):
        return lambda sentence: bool(_HAS_NUMBER.search(sentence))
    if _DEFINITION_QUESTION.search(question):
        return defines_subject_of(question)
    return None


def defines_subject_of(question: str):
    """A test for sentences written as a definition of what the question asks about: the defined head (before
    "means", "is a", ":") names a subject term of the question. "This guidance is a revision of ..." has the
    form of a definition but defines the guidance, not the design space asked about."""
    subject = matching_terms(question) - FRAME_TERMS - GENERIC_TERMS

    def fits(sentence: str) -> bool:
        m = _DEFINITION.search(sentence)
        return bool(m) and (not subject or bool(subject & matching_terms(m.group(0))))
    return fits


def parse_prompt(prompt_text: str) -> tuple[list[EvidenceBlock], str]:
    """Evidence blocks and the question from a PROMPT_V1 prompt (headers only ever start a line)."""
    evidence_part = prompt_text.split("### EVIDENCE\n", 1)[1].split("\n### END EVIDENCE", 1)[0]
    question = prompt_text.split("### USER QUESTION\n", 1)[1].split("\n\n### OUTPUT FORMAT", 1)[0].strip()
    return parse_evidence(evidence_part), question


LIST_ITEMS = 6
PREFIX = 6
# Words that frame a question rather than name its subject; an answer never needs to repeat them.
FRAME_TERMS = matching_terms("""define defines defined definition definitions mean means meant meaning quickly soon fast
    long often deadline deadlines timeframe timeline percentage percent number amount year date kind type counts
    qualifies considered""")


@dataclass(frozen=True)
class Candidate:
    score: float        # coverage, raised when the sentence is of the answer type asked for
    coverage: float     # weighted share of the question's terms the sentence covers
    own_terms: int
    block_order: int
    position: int
    sentence: str
    block: EvidenceBlock
    typed: bool = False  # of the answer type the question asks for


def _with_list_items(kept: list[Candidate], pieces: dict[tuple[int, int], str]) -> list[Candidate]:
    """A chosen sentence that introduces a list ("... the following conditions apply:") brings its items along."""
    out = {(c.block_order, c.position): c for c in kept}
    for c in kept:
        if not c.sentence.rstrip().endswith(":"):
            continue
        for position in range(c.position + 1, c.position + 1 + LIST_ITEMS):
            item = pieces.get((c.block_order, position))
            if item is None:
                break
            out.setdefault((c.block_order, position), replace(c, position=position, sentence=item))
    return list(out.values())


class ExtractiveBackend:
    model_name = "extractive-v2"

    def __init__(self, max_sentences: int = 3, min_coverage: float = 0.34, min_shared_terms: int = 2,
                 keep_ratio: float = 0.75, min_words: int = 5, max_words: int = MAX_WORDS,
                 absent_weight: str = "floor"):
        self.max_sentences = max_sentences
        self.min_coverage = min_coverage
        self.min_shared_terms = min_shared_terms
        self.keep_ratio = keep_ratio
        self.min_words = min_words
        self.max_words = max_words
        self.absent_weight = absent_weight

    def complete(self, prompt_text: str) -> LLMReply:
        blocks, question = parse_prompt(prompt_text)
        chosen = self.choose(blocks, question)
        if not chosen:
            return LLMReply(text=PROMPT_REFUSAL_LOCK, finish_reason="stop")
        return LLMReply(text=json.dumps(self.reply(chosen), ensure_ascii=False), finish_reason="stop")

    def choose(self, blocks: list[EvidenceBlock], question: str) -> list[Candidate]:
        question = as_spelt_in(question, [b.text for b in blocks])
        block_terms = [matching_terms(b.text) for b in blocks]
        q_terms = spelled_as_evidence(matching_terms(question) - FRAME_TERMS, set().union(*block_terms))
        if not q_terms:
            return []
        required = max(1, min(self.min_shared_terms, len(q_terms - GENERIC_TERMS)))
        sentences = [(order, position, sentence, block)
                     for order, block in enumerate(blocks)
                     for position, sentence in enumerate(_pieces(block.text))]
        focus = focus_terms(question)
        if focus and not any(focus & terms for terms in block_terms):
            return []  # the thing asked about is named nowhere in the evidence: a near-miss or a false premise
        named = {order: q_terms & name_terms(block.pdf) for order, block in enumerate(blocks)}
        df = Counter(t for *_, sentence, _ in sentences for t in matching_terms(sentence) & q_terms)
        n = max(len(sentences), 1)
        weight = {t: math.log(1 + n / df[t]) for t in df}
        # A question word found nowhere in the evidence (often framing: "early", "disease") counts, but only as
        # much as the most common word that is found: it lowers coverage without outweighing the subject.
        absent = (max if self.absent_weight == "rarest" else min)(weight.values(), default=1.0)
        weight.update({t: absent for t in q_terms - weight.keys()})
        total = math.fsum(weight.values())  # fsum: exact, so no set or dict order can tip a near-tie
        fits = answer_type_fits(question)

        candidates: list[Candidate] = []
        previous: dict[int, set[str]] = {}
        for order, position, sentence, block in sentences:
            terms = matching_terms(sentence)
            context = previous.get(order, set())
            previous[order] = terms
            n_words = len(words(sentence))
            if (n_words < self.min_words or n_words > self.max_words or is_injection(sentence)
                    or _FRONT_MATTER.search(sentence)):
                continue
            own = q_terms & terms
            covered = own | (q_terms & context) | named[order]
            if not own or len(covered) < required:
                continue
            coverage = math.fsum(weight[t] for t in covered) / total
            if coverage < self.min_coverage:
                continue  # related words, but not an answer: a near-miss the validator explains
            typed = bool(fits and fits(sentence))
            candidates.append(Candidate(coverage * (ANSWER_TYPE_BOOST if typed else 1.0), coverage, len(own), order,
                                        position, sentence, block, typed))
        unit = required_unit(question)
        if unit:
            candidates = [c for c in candidates if unit(c.sentence)]  # none left: refused
        if any(c.typed for c in candidates):
            candidates = [c for c in candidates if c.typed]  # the question asks for a time, a number or a definition
        if not candidates:
            return []
        ranked = sorted(candidates, key=lambda c: (-c.score, -c.own_terms, c.block_order, c.position))
        best = ranked[0]
        kept = [c for c in ranked if c.score >= self.keep_ratio * best.score][: self.max_sentences]
        pieces = {(order, position): sentence for order, position, sentence, _ in sentences}
        return sorted(_with_list_items(kept, pieces), key=lambda c: (c.block_order, c.position))

    def reply(self, chosen: list[Candidate]) -> dict:
        rows: dict[int, dict] = {}
        for c in chosen:  # one row per chunk: the validator drops a repeated (pdf, page, chunk_id)
            row = rows.setdefault(c.block_order, {"sentence": "", "pdf": c.block.pdf, "page": c.block.page,
                                                  "chunk_id": c.block.chunk_id})
            row["sentence"] = f"{row['sentence']} {c.sentence} [{c.block.anchor}]".strip()
        best = max(c.coverage for c in chosen)
        return {
            "answer_sentences": list(rows.values()),
            "confidence": "High" if best >= 0.8 else "Medium" if best >= 0.6 else "Low",
        }
