"""The question as the person meant it: what every relevance decision after retrieval scores.

A relevance model scores the words it is given. A typo ("critera"), an acronym where the answering sentence spells
the term out ("QOS" for "quality overall summary"), or two sentences of the asker's situation before the question
pull its score off the sentence that answers, while retrieval, which searches a variant in the corpus' own words,
already found that sentence. So the reading is made once, in retrieve, and carried on every record:

1. spelling: each typo read as the corpus word it is closest to (``spelling``: never an English word);
2. acronyms: each one the documents define written as they define it, "long form (SHORT)", whichever form the
   question used (``acronyms.spelled_out``);
3. the asking sentence: a question of several sentences is asked by the one(s) ending in "?" (the last sentence when
   none does); the others are the background, kept apart.

On the qa-v2 dev split this raised the relevance score's separation of answerable from unanswerable questions
(docs/relevance.md, "Reading the question").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache

from ...core.assumptions import premises
from ...core.slots import asked_slot
from ...models import QuestionReading
from ...store import ChunkSearch, ChunkStore
from ...core.text_units import split_sentences
from .lexicon import CorpusLexicon, corpus_lexicon


def asking_part(question: str) -> tuple[str, str]:
    """(the asking sentence(s), the background): a one-sentence question is all asking."""
    sentences = split_sentences(question)
    if len(sentences) <= 1:
        return question.strip(), ""
    asking = [s for s in sentences if s.rstrip().endswith("?")] or sentences[-1:]
    return " ".join(asking), " ".join(s for s in sentences if s not in asking)


def read_question(question: str, lexicon: CorpusLexicon | None, with_background: bool = False) -> QuestionReading:
    """The reading of ``question`` against the corpus ``lexicon`` (None: the question as written). With
    ``with_background`` the judges score the background, then the asking sentence (``asked``), as the background
    judge was trained to read them; what is asked for is still read from the asking sentence alone."""
    corrected: list[str] = []
    spelled: list[str] = []
    text = question
    if lexicon is not None:
        text, corrected = lexicon.spelling.corrected(text)
        text, spelled = lexicon.acronyms.spelled_out(text, lexicon.spelling.english)
    asked, background = asking_part(text)
    asked = asked or question
    scored = f"{background} {asked}" if with_background and background else asked
    return QuestionReading(asked=scored, background=background, corrected=corrected[:64], spelled_out=spelled[:64],
                           slot=asked_slot(asked), premises=premises(asked, background)[:16])


@lru_cache(maxsize=4096)
def has_background(asked: str) -> bool:
    """Whether a question as read (``QuestionReading.asked``) leads with the asker's situation: what routes it to
    the background judge. Asked on every scoring call of a question, so its sentences are split once."""
    return bool(asking_part(asked)[1])


class QuestionReader:
    """Readings remembered by question, so the extractive backend, which finds the question in the prompt as the user
    wrote it, scores the reading retrieve made (same worker), or makes the same one from the same lexicon."""

    def __init__(self, search: ChunkSearch, use_lexicon: bool = True, size: int = 4096, with_background: bool = False):
        self.search, self.use_lexicon, self.size, self.with_background = search, use_lexicon, size, with_background
        self._lock = threading.Lock()
        self._readings: OrderedDict[str, tuple[str, QuestionReading]] = OrderedDict()

    def read(self, question: str, index_version: str | None = None) -> QuestionReading:
        """The reading against the lexicon of ``index_version``; without one, the remembered reading, else the
        current index's."""
        with self._lock:
            hit = self._readings.get(question)
        if hit is not None and index_version in (None, hit[0]):
            return hit[1]
        version = index_version or ChunkStore(self.search.engine).index_version()
        reading = read_question(question, corpus_lexicon(self.search, version) if self.use_lexicon else None,
                                self.with_background)
        with self._lock:
            self._readings[question] = (version, reading)
            self._readings.move_to_end(question)
            while len(self._readings) > self.size:
                self._readings.popitem(last=False)
        return reading
