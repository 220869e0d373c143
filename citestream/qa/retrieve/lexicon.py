"""What retrieval learns from the corpus itself: its acronyms and its spelling, for one more query variant.

Both are built from each document's text in Postgres, once per index version
(an ingest changes the version), so every worker uses the same lexicon.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ...store import ChunkSearch, ChunkStore
from .acronyms import AcronymMap, build_map
from .spelling import Spelling, build_spelling, english_words


@dataclass(frozen=True)
class CorpusLexicon:
    acronyms: AcronymMap
    spelling: Spelling

    def variant(self, query: str) -> str | None:
        """``query`` spelt as the corpus spells it, plus the other form of its acronyms; None if that adds nothing.

        "Is bioavailabilty assessed?" → "Is bioavailability assessed? BA"."""
        corrected = self.spelling.correct(query)
        variant = " ".join([corrected, *self.acronyms.additions(corrected)])
        return variant if variant != query else None


def build_lexicon(documents: dict[str, str]) -> CorpusLexicon:
    return CorpusLexicon(build_map(documents), build_spelling(documents, english_words()))


_cache: dict[tuple[str, str], CorpusLexicon] = {}
_cache_lock = threading.Lock()


def corpus_lexicon(search: ChunkSearch, index_version: str | None = None) -> CorpusLexicon:
    """The lexicon of the index ``search`` reads at ``index_version`` (read from the index when not given), rebuilt
    when the version changes."""
    key = (str(search.engine.url), index_version or ChunkStore(search.engine).index_version())
    with _cache_lock:
        if key not in _cache:
            _cache.clear()
            _cache[key] = build_lexicon(search.document_texts())
        return _cache[key]
