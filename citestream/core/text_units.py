"""Small, deterministic text helpers shared by the filter, the extractive backend and the validator."""

from __future__ import annotations

from collections.abc import Iterable
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from .injection import is_injection

_WORD = re.compile(r"[a-z0-9]+(?:[-'.][a-z0-9]+)*")
# A sentence ends at . ! ? or ; (or a closing quote after them) before a capital or a digit; a footnote mark
# glued to the full stop ("holder.29 Applicants", "writing.”30 Such") stays with the sentence it ends. An item
# numbered in a sentence ("... should (1) test neat impurities; (2) test concentrations ...") opens none.
_SENTENCE_END = re.compile(
    r"(?:(?<=[.!?;])|(?<=[.!?][\u201d\"])|(?<=[a-z)][.!?]\d)|(?<=[a-z)][.!?]\d\d)|(?<=[.!?][\u201d\"]\d)"
    r"|(?<=[.!?][\u201d\"]\d\d))\s+(?!\((?:[a-z]|\d{1,2}|[ivx]{1,4})\) [a-z])"
    r"(?=[\"'\u201c(\[]?[A-Z0-9]|§|\((?:[a-z]|\d{1,2}|[ivx]{1,4})\) [A-Z])")
# A numbered paragraph after one its PDF ended without a full stop ("... distribution activities 2.2 Compliance with
# ..."), unless a word points at the number ("section 2.2 Risk ...") or it is a value ("of 0 and 1.1 While").
_PARAGRAPH_BREAK = re.compile(
    r"(?<=[a-z])(?<!\band)(?<!\bor)(?<!\bto)(?<!\bof)(?<!\bas)(?<!\bthan)(?<!\bby)(?<!\bat)(?<!\bfrom)(?<!\bis)"
    r"(?<!\bare)(?<!\bwith)(?<!\bbetween)(?<!\bpH)(?<![Ss]ection)(?<![Cc]hapter)(?<![Aa]nnex)(?<![Pp]art)"
    r"(?<![Tt]able)(?<![Ff]igure)(?<![Aa]ppendix)(?<![Pp]aragraph)(?<![Vv]ersion)(?<![Ss]tep)(?<![Pp]age)"
    r"(?<![Aa]rticle)(?<![Mm]odule)\s+(?=\d{1,2}\.\d{1,2}(?:\.\d{1,2}){0,3}\s+[A-Z][a-z])")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "U.S.C.", "U.S.", "No.", "Sec.", "approx.", "vs.", "Fig.", "et al.", "Rev.",
                 "Vol.", "a.m.", "p.m.", "Ph. Eur.", "St.")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    may must shall also per via within without upon whether any many much one two please tell explain describe
    according provided pdfs pdf document documents guidance say says said state states""".split()
)


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


@lru_cache(maxsize=8192)
def passage_words(passage: str) -> tuple[str, ...]:
    """``words`` of a chunk's text, remembered: the filter and validation read the same chunks again and again."""
    return tuple(words(passage))


def stem(word: str) -> str:
    """A light suffix stripper: enough to match 'submissions'/'submission', not a linguistic stemmer. A word in
    -ss keeps its ending, so 'process' meets 'processes' (both 'process'), not 'proces' beside 'process'."""
    if word.endswith("ss"):
        return word
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


# A statute, regulation or guideline cited with its subsections: "505(b)(2)", "314.94(a)(8)", "Q8(R2)".
_CITATION = re.compile(r"(?<![\w.])[a-z]?\d+(?:\.\d+)*[a-z]?(?:\([a-z0-9]{1,4}\))+")


def content_terms(text: str) -> set[str]:
    """Stemmed words that carry meaning (no stopwords, no one-letter tokens), and every cited provision whole:
    "505(b)(2)" and "505(b)(1)" share the word "505" but are different provisions."""
    normalized = normalize(text)
    terms = {stem(w) for w in _WORD.findall(normalized) if w not in STOPWORDS and len(w) > 1}
    return terms | set(_CITATION.findall(normalized))


_INITIAL = re.compile(r"\b([A-Z][a-z]+ [A-Z])\.(?= ([A-Z][a-z]+)\b)")
"""A middle initial between a first name and a surname ("contact Jeanne M. Delasko at ..."): no sentence end."""
_NOT_NAMES = frozenset("appendix annex section part table figure chapter step phase group module attachment class "
                       "category level stage tier type schedule exhibit option list item".split())


def _initial(found: re.Match[str]) -> str:
    first, after = found.group(1).split(" ")[0], found.group(2)
    if first.lower() in _NOT_NAMES or after.lower() in STOPWORDS or after.lower() in _OPENERS:
        return str(found.group(0))  # "Appendix A. Sponsors ...", "Group B. The ...": a sentence ends
    return f"{found.group(1)}\u0000i\u0000"


def split_sentences(text: str) -> list[str]:
    protected = _INITIAL.sub(_initial, text)
    for i, abbr in enumerate(ABBREVIATIONS):
        protected = protected.replace(abbr, abbr.replace(".", f"\u0000{i}\u0000"))
    parts = [p for s in _SENTENCE_END.split(" ".join(protected.split())) for p in _paragraph_breaks(s)]
    restored = []
    for part in parts:
        for i, abbr in enumerate(ABBREVIATIONS):
            part = part.replace(abbr.replace(".", f"\u0000{i}\u0000"), abbr)
        part = part.replace("\u0000i\u0000", ".")
        if part.strip():
            restored.append(part.strip())
    return _closed(restored)


def _paragraph_breaks(sentence: str) -> list[str]:
    """``sentence`` split before each numbered paragraph (``_PARAGRAPH_BREAK``) that follows a sentence: more words
    than a heading has, or words that open as a sentence does ("A wholesale distributor is ..."). A heading before
    the number ("Traceability of pharmaceutical products 8.9 Regulations ...") stays for ``heading_end`` to read as
    the sentence's subject."""
    out, start = [], 0
    for found in _PARAGRAPH_BREAK.finditer(sentence):
        before = sentence[start:found.start()].split()
        if len(before) > MAX_HEADING_WORDS or _opens_sentence(before):
            out.append(sentence[start:found.start()])
            start = found.end()
    return [*out, sentence[start:]]


MAX_JOINED = 2
"""A sentence end inside an open bracket or quotation ("(Ref. 15)", "(Feb. 12, 2026)", "“Part 11, Electronic Records;
Electronic Signatures”") is no end when the bracket closes within this many pieces after it, and the joined sentence
is no run-on (``MAX_UNIT_WORDS``: a longer quotation stays in its sentences, each still quotable); further on, the
bracket is a stray and the pieces stay apart."""


def _opens(piece: str) -> tuple[int, int]:
    """Brackets and curly quotation marks ``piece`` leaves open (negative: closes more than it opens)."""
    return (piece.count("(") + piece.count("[") - piece.count(")") - piece.count("]"),
            piece.count("\u201c") - piece.count("\u201d"))


def _closed(pieces: list[str]) -> list[str]:
    """``pieces`` with each one that leaves a bracket or quotation open joined to those that close it. Each piece is
    counted once, and at most ``MAX_JOINED`` are looked ahead, so the pass stays linear."""
    counts = [_opens(p) for p in pieces]
    lengths = [len(words(p)) for p in pieces]
    out: list[str] = []
    i = 0
    while i < len(pieces):
        end, length = i, lengths[i]
        brackets, quotes = counts[i]
        if brackets > 0 or quotes > 0:
            for j in range(i + 1, min(i + 1 + MAX_JOINED, len(pieces))):
                brackets, quotes, length = brackets + counts[j][0], quotes + counts[j][1], length + lengths[j]
                if length > MAX_UNIT_WORDS:
                    break
                if brackets <= 0 and quotes <= 0:
                    end = j
                    break
        out.append(" ".join(pieces[i:end + 1]))
        i = end + 1
    return out


# The bullet signs every reader of units knows; a PDF's layout adds more (``ingest.layout``). One set, so a list the
# parser keeps whole is split into the same items wherever a unit is read.
BULLET_SIGNS = "•●▪◦"
# the pieces are stripped: spaces around it went with \s*...\s*, read again and again. A symbol font's bullet keeps
# its private-use code in the text layer (U+F0B7 for "•", U+F0A7 "▪", U+F02D "-"), and a middle dot standing alone
# is one too ("... ; and · Describes ..."), and so is a hollow bullet read as the letter "o" before a capital ("... an
# EC. o Titre is ...", "... and pause o RTD and ..."): each opens an item, or a whole list reads as one run-on.
_BULLET = re.compile(f"[{BULLET_SIGNS}\uf0b7\uf0a7\uf02d]|(?<!\\S)\u00b7(?!\\S)|(?<!\\S)o\\s+(?=[A-Z])")
_CLAUSE_END = re.compile(r"(?<=[;:])\s+")
_LEADING_MARKS = re.compile(r"^(?:\d{1,4}\s+)+(?=[A-Z\u201c\"(])(?!(?:CFR|FR|U\.S\.C)\b)")  # "21 CFR" is a citation
# A list item's marker that sentence splitting left at the end of the item before ("... as follows: a.").
# A letter or roman numeral marker may also follow a word ("... recommendations in PSG i."): no sentence ends in one;
# a number may not ("... in Table 2.", "at least 3.").
_TRAILING_MARKER = re.compile(r"(?<=[:;.,)\d])\s+(?:(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)]|\((?:[a-z]|[ivx]{1,4}|\d{1,2})\))$"
                              r"|(?<=[A-Za-z])\s+(?:[a-z]|[ivx]{1,4})[.)]$")
_ONLY_MARKER = re.compile(r"^(?:\(?(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)])$")
MAX_UNIT_WORDS = 80  # longer pieces are run-ons (a list printed without full stops): split into clauses


@lru_cache(maxsize=8192)
def sentence_units(text: str) -> tuple[str, ...]:
    """The units an answer is made of: sentences, bulleted items (PDF lists have no full stops between items),
    and the clauses of a run-on longer than ``MAX_UNIT_WORDS`` words, split after ; and :. Line numbers or
    footnote marks in front of a unit, and a list marker left at its end ("... as follows: a."), are left out:
    what remains is still a verbatim span of the source, and a list's lead-in ends with its colon. Remembered per
    text (as ``scored_units``): the filter, the backend and validation split the same chunks."""
    return _lists_whole(split_units(text), text)


@lru_cache(maxsize=8192)
def split_units(text: str) -> tuple[str, ...]:
    """``sentence_units`` before a lead-in and its items are joined (a list unit's lead-in and items)."""
    pieces = (p.strip() for sentence in split_sentences(text) for p in _BULLET.split(sentence))
    units = (_TRAILING_MARKER.sub("", _without_paragraph_number(_LEADING_MARKS.sub("", clause))) for p in pieces
             if p.strip()
             for clause in _clauses(p))
    return tuple(u for u in units if u and not _ONLY_MARKER.match(u))


_PARAGRAPH_LEAD = re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,4}\.?\s+([A-Z][a-z]*)\b")


def _without_paragraph_number(unit: str) -> str:
    """A numbered paragraph's number left out when a sentence follows it ("16.1 There should be ...", "18.42 All
    equipment ..."), as a line number is; kept when the number is what the sentence is about ("1.12.15 Contains a
    request ...": a section of an application)."""
    found = _PARAGRAPH_LEAD.match(unit)
    if found and found.group(1).lower() in _OPENERS:
        return unit[found.start(1):]
    return unit


LIST_MAX_WORDS = 120
"""A lead-in with its list is one unit up to this many words (~170 tokens: with a question, within the judge's 256);
a longer list stays split into its items. Over the corpus and the training documents, 11 of 689 lists are longer."""
_STOPS_SENTENCE = re.compile(r"[.!?][\"\u201d)\]]?$")
_LEAD_IN = re.compile(r":(?:\s|$)")


def _lists_whole(units: tuple[str, ...], text: str) -> tuple[str, ...]:
    """A lead-in (a unit with a colon that does not end a sentence: "... must record the following information:
    (1) The name of the device serviced;") and the items after it, up to the one that ends a sentence, as one unit:
    what a person quotes. Only when the joined unit is still a verbatim word sequence of ``text`` (a list marker
    left out between two items would make it none) and at most ``LIST_MAX_WORDS`` long. Items that are sentences
    each ("... as follows: 1. The applicant withdraws. 2. ...", "... considered: • Dissolution testing should be
    ... speed. Dissolution data ...") stay units of their own, and so does their lead-in, not glued to the first
    one alone: an answer cites every sentence, and quotes the items after a lead-in it quotes."""
    if not any(_LEAD_IN.search(u) for u in units):
        return units
    source = _Source(text)
    out: list[str] = []
    i = 0
    while i < len(units):
        end, size = i + 1, len(units[i].split())
        if _LEAD_IN.search(units[i]) and not _STOPS_SENTENCE.search(units[i]):
            while end < len(units) and size <= LIST_MAX_WORDS and not _STOPS_SENTENCE.search(units[end - 1]):
                size += len(units[end].split())
                end += 1
        sentences = (end == i + 2 and end < len(units) and units[i].rstrip().endswith(":")
                     and _STOPS_SENTENCE.search(units[i + 1]))
        joined = " ".join(units[i:end])
        if end > i + 1 and not sentences and size <= LIST_MAX_WORDS and source.next_is(joined):
            out.append(joined)
            i = end
        else:
            source.next_is(units[i])
            out.append(units[i])
            i += 1
    return tuple(out)


class _Source:
    """A text's words, read in order: is the next unit a verbatim word sequence where the last one ended? Each look
    reads a window just past the last unit's end (markers left out between units are short), so a text is read
    once, however many lists it holds. A hollow bullet read as "o" is no word of either: the joined list leaves it
    out."""

    SLACK = 200

    def __init__(self, text: str):
        self.words, self.at = f" {' '.join(w for w in passage_words(text) if w != 'o')} ", 0

    def next_is(self, unit: str) -> bool:
        needle = f" {' '.join(w for w in words(unit) if w != 'o')} "
        found = self.words.find(needle, self.at, self.at + len(needle) + self.SLACK)
        if found >= 0:
            self.at = found + len(needle) - 1
        return found >= 0


MIN_UNIT_WORDS = 5


@lru_cache(maxsize=16384)
def quotable(unit: str, checklist: bool = False) -> bool:
    """A unit that can stand as an answer sentence: 5 to ``MAX_UNIT_WORDS`` words (a lead-in with its list: up to
    ``LIST_MAX_WORDS``), not a label (a heading, a table-of-contents line, a list of section numbers: ``is_label``),
    not a bare citation (``is_reference``) and not an instruction aimed at a model (a prompt injection inside a
    document). A question is a label, except an item of a ``checklist`` (``checklist_items``). Remembered per unit:
    retrieval and the backend ask about the same units."""
    n = len(words(unit))
    longest = LIST_MAX_WORDS if _LEAD_IN.search(unit) else MAX_UNIT_WORDS
    label = is_label(unit) and not (checklist and asks(unit) and not _TOC_LEADER.search(unit))
    return MIN_UNIT_WORDS <= n <= longest and not label and not is_reference(unit) and not is_injection(unit)


def asks(unit: str) -> bool:
    """A unit that is a question."""
    return unit.rstrip().rstrip("\"\u201d)").endswith("?")


def checklist_items(units: tuple[str, ...]) -> frozenset[int]:
    """The questions of a passage that are a checklist's items, not a document's own questions: two or more in a row
    ("Are stock inventories checked periodically? Are vehicles cleaned and fit for purpose?"). An inspection
    aide-memoire or an audit checklist says what to check by asking it, so its questions are what a reader quotes; a
    FAQ's question is followed by its answer, which is quoted instead (and read with the question: ``subject``)."""
    asking = [asks(u) for u in units]
    return frozenset(i for i, a in enumerate(asking)
                     if a and ((i > 0 and asking[i - 1]) or (i + 1 < len(units) and asking[i + 1])))


@dataclass(frozen=True)
class Unit:
    """A quotable unit of a passage: where it stands among the passage's ``sentence_units``, what is quoted, and
    what the relevance model reads for it: the quote, and the quote after its subject when it has one. A unit
    scores as its best reading."""

    position: int
    quote: str
    readings: tuple[str, ...]

    @property
    def about(self) -> bool:
        """Read with a subject said before it."""
        return len(self.readings) > 1


@lru_cache(maxsize=8192)
def read_units(passage: str, headings: tuple[str, ...] | None = None) -> tuple[Unit, ...]:
    """The passage's quotable units. A heading glued to the sentence under it (``heading_end``, or a line of the
    passage that is a heading: ``heading_lines``) is not quoted: it is the sentence's subject. Nor is a
    cross-reference glued before a sentence (``reference_end``). A unit that refers to a subject said before
    (``subject``) is also read after it: on the qa-v2 dev split the subject's reading alone lowered how often the
    answering sentence ranked first (45 → 42 of 81), the better of the two did not (45) (docs/relevance.md, "A
    sentence read with its subject"). ``headings``: the passage's heading lines when it is read as one line (the
    prompt's evidence, ``SelectedEvidence.headings``); None: its own lines. Remembered per passage."""
    units = sentence_units(passage)
    checklist = checklist_items(units)
    known = _unnumbered(_headings(passage.split("\n") if headings is None else headings))
    cuts = [_heading_cut(unit, known) for unit in units]
    bodies = tuple(unit[cut:].strip() for unit, cut in zip(units, cuts))  # a subject is read from a sentence
    out = []
    for i, unit in enumerate(units):
        cut, reference = cuts[i], 0
        if not cut:
            reference = reference_end(unit)
        quote = _without_paragraph_number(unit[cut or reference:].strip())
        if not (quote in known and _names(quote)) and quotable(quote, i in checklist):
            about = unit[:cut].strip() if cut else subject(bodies, i, checklist)
            readings = (quote, f"{about}: {quote}") if about else (quote,)
            out.append(Unit(i, quote, readings + _item_readings(quote)))
    return tuple(out)


def _item_readings(quote: str) -> tuple[str, ...]:
    """A list unit is also read item by item, each after its lead-in ("... must record the following information:
    (4) The individual(s) who serviced the device;"): the item that answers is found, and read, on its own."""
    if not _LEAD_IN.search(quote):
        return ()
    parts = split_units(quote)
    if len(parts) < 3:
        return ()
    first = () if parts[0].rstrip().endswith(":") else (parts[0],)  # the lead-in with its first item glued on
    return first + tuple(f"{parts[0]} {item}" for item in parts[1:])


def heading_lines(passage: str) -> tuple[str, ...]:
    """The passage's lines that are headings (``is_label``, ``_numbered``, ``set_apart``). The PDF set each on a line
    of its own, so a unit opening with one has it glued on, even where ``heading_end`` sees no sentence start after it
    ("DOAC Stroke Prevention Direct oral anticoagulants ...", "3.2.1 ECs Definition ECs are ...", "Recalibration and
    model maintenance Tracking the calibration ...")."""
    return tuple(sorted(_headings(passage.split("\n"))))


def _headings(lines: Iterable[str]) -> frozenset[str]:
    """The heading lines, and a heading's line joined with the next when that one goes on in lower case ("6.
    Information on the chemical and pharmaceutical quality" / "concerning placebo products in clinical trials")."""
    spaced = [" ".join(line.split()) for line in lines]
    found = {h for h in spaced
             if set_apart(h) or (0 < h.count(" ") < MAX_HEADING_WORDS and (is_label(h) or _numbered(h)))}
    found |= {joined for h, after in pairwise(spaced)
              if h in found and after[:1].islower() and set_apart(joined := f"{h} {after}")}
    return frozenset(found)


MAX_LINE_HEADING_WORDS = 24
"""The longest line read as a heading by its shape (``set_apart``): ICH's example titles run to 17 words."""


def set_apart(line: str) -> bool:
    """A line shaped as a heading, in any case: two to ``MAX_LINE_HEADING_WORDS`` words opening with a capital, a
    section number or a list's letter, no sentence or clause end at its end, no table cell, balanced brackets
    ("Recalibration and model maintenance", "a. Over-encapsulation of clinical trial formulations", "A. Example 1:
    Linking Material Attributes ... – Chemical Entity (10.1)"). A paragraph's line ends with its sentence; a
    heading's does not, nor does it run on ("... written comments, or": a list item). It is cut off a unit only where
    a quotable sentence follows it (``_line_heading_end``); the layout also reads a block's start by it
    (``ingest.layout._heading_so_far``)."""
    tokens = line.split(" ")
    return (1 < len(tokens) <= MAX_LINE_HEADING_WORDS and bool(_HEADING_START.match(line) or _lettered(tokens))
            and not line.rstrip("\"'\u201d\u2019").endswith(_SENTENCE_PUNCT) and " | " not in line and _balanced(line)
            and not _TOC_LEADER.search(line) and tokens[-1] not in _RUNS_ON)


def _names(line: str) -> bool:
    """A heading line that names and says nothing (``set_apart``, no verb): alone on its line it is still a heading,
    never an answer ("Over-encapsulation of clinical trial formulations"). A table cell or list item printed
    without a full stop says something ("ANDA to be submitted within 6 to 8 months of ...") and stays quotable."""
    return set_apart(line) and not _VERBS & set(line.split())


def _lettered(tokens: list[str]) -> bool:
    return len(tokens) > 1 and bool(_LETTER.fullmatch(tokens[0])) and tokens[1][:1].isupper()


_NUMBERED_LINE = re.compile(r"^(?=\S*\d)(?:\d{1,2}|[A-Z])(?:\.(?:\d{1,2}|[A-Z])){1,6}\.? [A-Z]")
_VERBS = frozenset("should shall must may is are be will can has have was were contains include includes provides "
                   "describes requires".split())


def _numbered(line: str) -> bool:
    """A line that is a numbered heading set in sentence case ("5.2.1.S Drug substance", "3.2 Risk assessment"): a
    section number with a dot, a capital after it, no verb and no sentence end. A numbered paragraph's first line
    wrapped short has a verb, or goes on in lower case (and ``_line_heading_end`` cuts only before a sentence)."""
    return (bool(_NUMBERED_LINE.match(line)) and not line.endswith(_SENTENCE_PUNCT)
            and not _VERBS & {t.lower() for t in line.split()})


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def _unnumbered(headings: frozenset[str]) -> frozenset[str]:
    """The headings, and each numbered one also without its number: the sentence splitter ends a sentence after
    "C." or "IV.", so the unit under "C. Labeling Format" opens with "Labeling Format FDA requests ...". Over the
    corpus and the dev documents, 86 of 4,742 quotes opened so (docs/experiments/2026-11-30-numbered-headings.md)."""
    bare = (h.split(" ", 1) for h in headings)
    return headings | {parts[1] for parts in bare
                       if len(parts) == 2 and (_SECTION_NUMBER.match(parts[0]) or _LETTER.fullmatch(parts[0]))}


MAX_STACKED_HEADINGS = 6
"""Heading lines cut off one unit after the first cut: a subsection's, and more (Q12's "3.2.1 ECs Definition", a
title page's council, guideline, title, version and date lines)."""


def _heading_cut(unit: str, headings: frozenset[str]) -> int:
    """Where the headings glued to the front of ``unit`` end: a section's heading, then its subsection's line
    ("4. KNOWLEDGE AND RISK MANAGEMENT ... 4.1 Knowledge Management As with ..."); 0 when it opens with none. A
    heading line of the chunk is looked for first: ``heading_end`` guesses from words, and "Disadvantages of Not
    Using a TPP ..." holds a sentence opener ("Using a")."""
    cut = 0
    for _ in range(1 + MAX_STACKED_HEADINGS):  # bounded: a unit of a hostile PDF may repeat one heading at length
        more = _line_heading_end(unit[cut:], headings) or heading_end(unit[cut:]) or _numbered_title_end(unit[cut:])
        if not more:
            break
        cut += more
    return cut


def _numbered_title_end(unit: str) -> int:
    """Where a numbered heading set in title case ends when the sentence after it restates it, in sentence case ("4.5
    Risk Communication Risk communication is the sharing ...": ICH sets the heading beside the paragraph's first
    line, on one line of text); 0 otherwise. A capital then a word in lower case alone is no sentence start ("11.40
    Authentic Certificates of Analysis should be issued ...")."""
    tokens = unit.split(" ", MAX_HEADING_WORDS + 2)
    if len(tokens) < 6 or not _SECTION_NUMBER.match(tokens[0]):
        return 0
    for j in range(2, min(len(tokens) - 4, MAX_HEADING_WORDS + 1)):
        title, word, after = tokens[1:j], tokens[j], tokens[j + 1]
        if not all(_title_word(t) for t in title):
            return 0
        if word.lower() == title[0].lower() and word[1:].islower() and after[:1].islower():
            rest = unit[len(" ".join(tokens[:j])) + 1:]
            return len(unit) - len(rest) if quotable(rest) else 0
    return 0


def _title_word(token: str) -> bool:
    return (token[:1].isupper() and not token.endswith(_SENTENCE_PUNCT)) or token in _HEADING_SMALL


def _line_heading_end(unit: str, headings: frozenset[str]) -> int:
    """Where a heading line glued to the front of ``unit`` ends (the longest), when a whole quotable sentence follows
    it (a capital or a digit after it), or only the next heading's number; 0 otherwise. A table row keeps its
    header ("Test: Assay | Limit: ..."). Looks up the unit's first words, never each heading: linear in the unit
    whatever the passage holds."""
    if not headings or " | " in unit:
        return 0
    tokens = unit.split(" ", MAX_LINE_HEADING_WORDS)
    for n in range(min(len(tokens) - 1, MAX_LINE_HEADING_WORDS), 0, -1):
        heading = " ".join(tokens[:n])
        if heading in headings and _balanced(heading):  # "... Plan [21 CFR" is a line of a heading, not all of it
            rest = unit[len(heading) + 1:]
            sentence = (rest[:1].isupper() or rest[:1].isdigit()) and quotable(rest)
            if sentence or _SECTION_NUMBER.match(rest) or _ONLY_MARKER.match(rest):
                return len(heading) + 1  # "MEETINGS A.", "Summary a.": a heading and the next one's number
    return 0


def scored_units(passage: str) -> tuple[str, ...]:
    """The texts a passage is scored by: every reading of its quotable units (``read_units``), or the passage itself
    when it has none. Ingest keeps their vectors, so no worker embeds a corpus sentence."""
    return tuple(r for u in read_units(passage) for r in u.readings) or (passage,)


# ---------------------------------------------------------------- what a unit is about, and what is no sentence

_REFERENCES = frozenset("it its they their them this these those such".split())
"""Words that open a sentence whose subject is elsewhere ("It requires ...", "These include ...", "Such studies")."""
_HEADING_SMALL = frozenset("a an and as at by for from in of on or the to vs versus with".split())
_LETTER = re.compile(r"\(?[a-z][.)]")  # "a.", "(b)": the letter of a lettered heading or item
_RUNS_ON = _HEADING_SMALL | {"nor", "but", "than"}  # a line ending on one goes on (``set_apart``)
_OPENERS = (STOPWORDS - frozenset(
    "according provided pdfs pdf document documents guidance say says said state states please tell explain describe "
    "one two".split())) | frozenset(
    """although though whereas since unless once following regarding however therefore thus moreover additionally
    also generally typically currently specifically ordinarily usually similarly accordingly consistent based
    included prior given using depending unlike""".split())
"""Function words a sentence opens with (the question words of ``STOPWORDS`` left out: "Guidance", "States" and
"Document" are title words): after a heading, one of them starts the sentence."""
_SECTION_NUMBER = re.compile(r"^\(?(?:[IVX]{1,5}|[A-Z]|\d{1,3}(?:\.\d{1,3}){0,5})[.)]?\)?$")
_TOC_LEADER = re.compile(r"\.{4,}|(?:\. ){4,}|…{2,}|_{4,}")
_REFERENCE_TOKEN = re.compile(
    r"^(?:§+|and|or|part|parts|sections?|cfr|u\.s\.c\.?|usc|\(?\d+(?:\.\d+)*\)?|(?:\([a-z0-9]{1,4}\))+"
    r"|\d+(?:\.\d+)*(?:\([a-z0-9]{1,4}\))+)[,;.)]*$", re.IGNORECASE)


def refers_back(unit: str) -> bool:
    """The unit opens with a reference to something said before: a pronoun ("It", "These", "Such"), or one after a
    sentence adverb ("Typically, it involves ...")."""
    first = unit.split()[:3]
    lowered = [w.strip(",;:").lower() for w in first]
    return bool(lowered) and (lowered[0] in _REFERENCES
                              or (first[0].endswith(",") and len(lowered) > 1 and lowered[1] in _REFERENCES))


def continues(unit: str) -> bool:
    """The unit goes on from the one before it: it refers back (``refers_back``), or its opening clause does ("If
    this occurs, ...", "In such cases, ...", "For these products, ..."): what it says needs the sentence before."""
    if refers_back(unit):
        return True
    clause = re.split(r"[,;:]", unit, maxsplit=1)
    if len(clause) < 2:
        return False
    words = [w.lower() for w in clause[0].split()]
    return 1 < len(words) <= 6 and any(w in _REFERENCES for w in words[1:])


def _lead(sentence: str) -> str:
    """What a sentence is about, read from its opening: its words up to the first comma, colon, semicolon or
    bracket, at most eight ("Lecanemab, an anti-amyloid-beta antibody, demonstrated ..." → "Lecanemab")."""
    return " ".join(re.split(r"[,;:(]", sentence, maxsplit=1)[0].split()[:8])


def _opens_with_a_name(lead: str) -> bool:
    """A lead that opens with a name, not a function word ("Lecanemab in Early Alzheimer's Lecanemab", "ICH Q9")."""
    parts = lead.split()
    return 1 <= len(parts) <= 8 and parts[0][:1].isupper() and parts[0].lower() not in STOPWORDS


def subject(units: tuple[str, ...], i: int, checklist: frozenset[int] = frozenset()) -> str:
    """What unit ``i`` is about when it does not say so itself, read from the unit before: the question it answers
    when that unit is one (a document's FAQ; not an item of a ``checklist``, ``checklist_items``); the lead of that
    unit when ``i`` opens with a pronoun ("These include ..."), or with "The <noun>" right after a sentence that
    opens with a name ("Lecanemab, an antibody, ... . The drug targets ..."). Empty when the unit names its own
    subject.

    Measured on the qa-v2 dev split: the whole sentence before as context lowered how often the answering sentence
    ranked first (45 → 39 of 81); its lead alone moved it by a question either way (docs/relevance.md, "A sentence
    read with its subject")."""
    if i == 0:
        return ""
    unit, before = units[i], units[i - 1]
    if asks(before):  # a document's own question: "Who reviews ...? A team of ..." (not a checklist's item)
        return "" if i - 1 in checklist else before
    opener = unit.split()[:2]
    if refers_back(unit) or (len(opener) == 2 and opener[0] == "The" and opener[1][:1].islower()
                             and _opens_with_a_name(_lead(before))):
        return _lead(before)
    return ""


def _heading_word(token: str) -> bool:
    return (token[:1].isupper() or token.lower() in _HEADING_SMALL or bool(_SECTION_NUMBER.match(token))
            or not any(c.isalpha() for c in token))


_NOT_OPENERS = frozenset("i may us will is are was were be been being am has have had do does did".split())
"""Stopwords that are a pronoun, a month or a verb when capitalised mid-line ("in May the ...", "a Drug That Is a
Duplicate": a title)."""
_DETERMINERS = frozenset("the a an this these that each all any every".split())
_ACRONYM = re.compile(r"^\(?[A-Z][A-Z0-9&/-]*[A-Z0-9]s?\)?[,.;:]?$")
_LIST_MARK = re.compile(r"^\((?:[a-z]|\d{1,2}|[ivx]{1,4})\)$")
_PARAGRAPH_NUMBER = re.compile(r"^\d{1,3}(?:\.\d{1,3}){1,4}\.?$")  # "8.9", "19.60", "3.2.1."
_HEADING_START = re.compile(r"^(?:[A-Z0-9§\u201c\"(]|[IVX]+\.)")
_SENTENCE_PUNCT = (".", ":", ";", "?", "!", ",")
_AUXILIARIES = frozenset("be is are was were been being".split())  # "... May Be Included in ...": a title
MAX_HEADING_WORDS = 12


def _shouted(tokens: list[str]) -> bool:
    """Every word of four or more letters set in capitals, and at least one such ("BACKGROUND", "I. INTRODUCTION")."""
    long = ["".join(filter(str.isalpha, t)) for t in tokens]
    long = [w for w in long if len(w) >= 4]
    return bool(long) and all(w.isupper() for w in long)


def _opens_sentence(tokens: list[str]) -> bool:
    """The words open as a sentence does: a capitalised function word, then a word in lower case that is not a small
    title word ("As described", not "Using a TPP")."""
    return (len(tokens) > 1 and tokens[0].lower() in _OPENERS and tokens[1][:1].islower()
            and tokens[1] not in _HEADING_SMALL)  # "Using a TPP During ..." is a title


def _heading_prefix(tokens: list[str]) -> bool:
    """Words that can be a heading: at most ``MAX_HEADING_WORDS``, opening with a capital, a number or a section
    sign, none ending a sentence or a clause (a section number such as "I.9" or "3.2." may hold a full stop)."""
    if not tokens or len(tokens) > MAX_HEADING_WORDS or not _HEADING_START.match(tokens[0]):
        return False
    named = any(sum(c.isalpha() for c in t) >= 3 and not _LIST_MARK.match(t) for t in tokens)  # not "(iii)", "18.42"
    if _SEE.match(tokens[0]) or _opens_sentence(tokens):  # "See guidance ... May Be Included", "As described in"
        return False
    return named and not any(t.endswith((".", ":", ";", "?", "!")) and any(c.islower() for c in t) for t in tokens)


def heading_end(unit: str) -> int:
    """Where a heading glued to the sentence after it ends (the PDF's heading line and the paragraph under it become
    one line of text): the offset of the sentence, or 0 when the unit opens with none.

    Mid-line, a capitalised function word followed by a word in lower case opens a sentence: English never
    capitalises "The", "If", "To" or "Where" inside a sentence, so what stands before it (a short run of words that
    ends no clause) is a heading: "Reporting The store manager ...", "Viral safety Where applicable, ...",
    "Established Conditions (ECs) (Chapter 3) The concept ...". A determiner may also open on an acronym ("The
    Role of an RLD in an ANDA The RLD is ..."); after a heading set in capitals any word may follow ("BACKGROUND In
    March of 1997 ..."); a list marker after a heading opens the list's first item ("Subpart A-General Provisions §
    211.1 Scope (a) The regulations ..."), and so does a numbered paragraph ("Traceability of pharmaceutical
    products 8.9 Regulations should ..."). Title case never cuts: a capitalised function word followed by another
    capital belongs to a title ("Drugs In Development")."""
    tokens = unit.split(" ")
    for j in range(1, min(len(tokens) - 1, MAX_HEADING_WORDS + 1)):
        token, following, before = tokens[j], tokens[j + 1], tokens[j - 1]
        if (before.endswith(":") and _shouted(tokens[:j]) and token[:1].isupper() and len(tokens) - j >= 4
                and " | " not in unit and _heading_prefix(tokens[:j])):
            return len(" ".join(tokens[:j])) + 1  # a run-in heading in capitals: "REPORTING INSTRUCTIONS: All ..."
        if before.endswith(_SENTENCE_PUNCT) or before.lower() in _AUXILIARIES or len(tokens) - j < 4:
            continue
        bare = token.lower().removesuffix(",")  # "Package Type Generally, labeling ...": an opener with its comma
        opener = ((token[:1].isupper() and token[1:].islower()) or (len(token) == 1 and token.isupper())) and (
            bare in _OPENERS and bare not in _NOT_OPENERS) and not (bare == "no" and following[:1].isdigit())
        if opener:
            opens = (following[:1].islower() or following[:1].isdigit()
                     or (bare in _DETERMINERS and bool(_ACRONYM.match(following))) or _shouted(tokens[:j]))
        else:  # a list marker or a numbered paragraph opens the text under a heading
            numbered = (bool(_PARAGRAPH_NUMBER.match(token)) and (j >= 2 or _shouted(tokens[:j]))  # not "Table 2.1
                        and before.lower() not in _POINTING)  # Summary", "§ 211.1 Scope"; "INTRODUCTION 2.1 Wholesale"
            opens = (bool(_LIST_MARK.match(token)) or numbered) and following[:1].isupper()
        if opens and _heading_prefix(tokens[:j]):
            return len(" ".join(tokens[:j])) + 1
    return 0


_POINTING = frozenset("§ §§ section part sec. table figure annex chapter appendix".split())
"""Words before a number that point at a provision ("Table 2.1 Summary"): the number opens no paragraph."""
_SEE = re.compile(r"^\(?(?:See|see|Cf\.|cf\.)(?: also)?\b")


def reference_end(unit: str) -> int:
    """Where a cross-reference glued before a sentence ends: a parenthesis whose opening the text lost, after
    reference words only ("See also Annex 11, 15) Computerised systems should ..." → "Computerised systems ..."). 0
    when the unit opens with none."""
    depth = 0
    tokens = unit.split(" ")
    for j, token in enumerate(tokens[:12]):
        depth += token.count("(") - token.count(")")
        if depth < 0:
            head = tokens[:j + 1]
            if _SEE.match(unit) or all(_reference_word(t) for t in head):
                return len(" ".join(head)) + 1 if j + 1 < len(tokens) else 0
            return 0
    return 0


def _reference_word(token: str) -> bool:
    """A word a cross-reference is made of: a provision, a number, a capitalised title word or a small word."""
    bare = token.strip("(),;:.")
    return (not bare or bare.lower() in _REFERENCE_WORDS or bool(_REFERENCE_TOKEN.match(token))
            or bool(_SECTION_NUMBER.match(bare)) or bare[:1].isupper() or bare.lower() in _HEADING_SMALL)


_REFERENCE_WORDS = frozenset("see also annex annexes chapter chapters section sections part parts article articles "
                             "appendix paragraph paragraphs title cfr u.s.c usc § §§ and or e.g i.e guidance guideline "
                             "guidelines industry draft final revision".split())


def is_reference(unit: str) -> bool:
    """A unit that only points at a provision or a document: a citation ("Section 505(j)(2) of the FD&C Act;",
    "See 21 CFR 312.23(a)(7).", "21 CFR 314.3(b)."), made of reference words, capitalised title words and numbers,
    with at least one number. It names where to read, and never answers."""
    tokens = [t for t in unit.split() if t.strip("(),;:.\"“”")]
    return bool(tokens) and any(any(c.isdigit() for c in t) for t in tokens) and all(
        _reference_word(t.strip("\"“”")) for t in tokens)


_CODE_SECTION_TITLE = re.compile(
    r"^(?:§{1,2} ?\d{1,4}(?:\.\d{1,4}){0,3}|\d{3}\.\d{1,3})[a-z]? [A-Z][^.;:?!]{0,200}\.$")
"""A section of the Code and its title, the one sentence end at its end: "§ 211.87 Retesting of approved components,
drug product containers, and closures.", or the title's number without its sign ("211.46 Ventilation, air
filtration, air heating and cooling."): a part of the Code has three digits, a guideline's paragraph fewer
("9.21 Periodic stock reconciliation should be performed ...")."""


_CODE_TITLE_AT_END = re.compile(r"(?<!\S)§{1,2} ?\d{1,4}(?:\.\d{1,4}){0,3}[a-z]? [A-Z][^.;:?!§\[\]]{0,200}\.$")
_BRACKETED = re.compile(r"\[[^\[\]]*\]")


@lru_cache(maxsize=16384)
def is_label(unit: str) -> bool:
    """A line that names, points or asks rather than says: a heading (capitalised words, no sentence end), a table of
    contents line (dot leaders), a run of section references ("§ 11.10 (e), (k)(2) and 11.30") or a question. Never
    an answer sentence, whatever its score."""
    if _TOC_LEADER.search(unit) or asks(unit):  # a question asks, not says
        return True
    tokens = unit.split()
    if tokens and all(_REFERENCE_TOKEN.match(t) for t in tokens):
        return True
    if _CODE_SECTION_TITLE.match(unit) and len(tokens) <= MAX_HEADING_WORDS + 4:
        return True
    titled = _CODE_TITLE_AT_END.search(unit) if len(tokens) <= 2 * MAX_HEADING_WORDS else None
    if titled and titled.start() > 0:  # "Subpart C-Buildings and Facilities § 211.42 Design and construction features."
        before = _BRACKETED.sub("", unit[:titled.start()]).strip()  # "§ 820.5 [Reserved]", "[43 FR 45077, ...]"
        if not before or is_label(before):
            return True
    stripped = unit.rstrip()
    ends_sentence = re.search(r"[.!?:;][\"\u201d)]?$", stripped) and not re.search(r"\)\.\d{1,2}$", stripped)
    capitals = sum(t[:1].isupper() for t in tokens if any(c.isalpha() for c in t))
    return not ends_sentence and capitals >= 2 and all(_heading_word(t) for t in tokens)


def _clauses(piece: str) -> list[str]:
    if len(piece.split()) <= MAX_UNIT_WORDS:
        return [piece]
    clauses: list[list[str]] = []  # each clause's parts, joined once: joining as they come is quadratic
    for clause in (c.strip() for c in _CLAUSE_END.split(piece)):
        if clauses and len(clause.split()) < 3:  # "or," / "and" left over from a list: stays with its item
            clauses[-1].append(clause)
        elif clause:
            clauses.append([clause])
    return [" ".join(parts) for parts in clauses]


def file_name_words(pdf: str) -> str:
    """A document's file name as words ("Q9_Guideline.pdf" -> "Q9 Guideline"), for matching a question to it."""
    return re.sub(r"[_\-.]+", " ", re.sub(r"\.pdf$", "", pdf, flags=re.I))


@lru_cache(maxsize=16384)
def matching_terms(text: str) -> frozenset[str]:
    """``content_terms`` with a final silent e dropped, so 'reduce', 'reduces' and 'reduced' meet as 'reduc'.
    Remembered: the relevance model's coverage check reads the same corpus sentences for every question."""
    return frozenset(t[:-1] if len(t) > 4 and t.endswith("e") else t for t in content_terms(text))


# The disclaimers and distribution notes on every FDA/ICH guidance's title pages: never the answer to a question.
DISCLAIMER = re.compile(
    r"(?:represents?|will represent|will reflect)\b.{0,80}?current\s*thinking"
    r"|does not (?:establish|create|confer)(?: or (?:create|confer))? any rights"
    r"|not (?:be )?binding on (?:FDA|the public)|does not operate to bind"
    r"|alternative approach (?:may be used )?if (?:it|such approach) satisfies"
    r"|additional copies (?:of this guidance )?are available"
    r"|contact the (?:FDA )?(?:staff|office) responsible|has been developed by the appropriate ICH",
    re.IGNORECASE,
)


def disclaimer_share(text: str) -> float:
    """Share of the text's words in disclaimer sentences: near 1 for a title page, small for a page of content."""
    sentences = split_sentences(text)
    total = sum(len(words(s)) for s in sentences)
    return sum(len(words(s)) for s in sentences if DISCLAIMER.search(s)) / total if total else 0.0
