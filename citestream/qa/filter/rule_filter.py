"""Phase B, local mode (qa-contract-v1 Phase B): drop artifacts, keep question-relevant facts, dedupe, cap.

Rules (general, measured on the shape of the corpus, never on known questions):

* artifacts: fewer than 5 words (running headers, footers, page numbers);
  mostly numbers, or a run of consecutive integers (line numbers), with fewer
  than 25 other words around them (a line-numbered draft page or a table with
  real prose is kept); tables of contents (two or more dot leaders, or one
  with a "table of contents" heading); contact boilerplate (two or more of e-mail,
  web address, phone number: "additional copies are available from ...");
  a title page (at least three quarters of its words in disclaimer sentences:
  "This guidance represents the current thinking ... is not binding ...");
* relevance: the relevance model's score (carried on each fact from Phase A) must reach the policy's fact
  floor (``NOT_RELEVANT``); a fact without a score (no model) is not judged on relevance;
* duplicates: the same normalised similarity key (the first 40 normalised
  words: case, punctuation, spacing and hyphenation differences vanish) as a
  better-scored fact;
* at most ``max_context_chunks``, in Phase A order (most relevant first), with their Phase A scores.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...models import Fact
from ...models.filtering import DroppedFact
from ...core.text_units import disclaimer_share, passage_words, words

MIN_WORDS = 5
MIN_PROSE_WORDS = 25  # a line-numbered page with this much text is a fact with numbers, not an artifact
KEY_WORDS = 40
DISCLAIMER_SHARE = 0.75
_DOT_LEADER = re.compile(r"(?:\.\s?){5,}|(?:…\s?){2,}")
# An address read from the start of its run of characters only (from each word in it, a run of "1.1.1..." was
# read to its end once per word).
_EMAIL = re.compile(r"(?<![\w.+-])[.+-]*\w[\w.+-]*@[\w-]+\.[\w.]+\b")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_PHONE = re.compile(r"\b\d{3}[-. ]\d{3}[-. ]\d{4}\b")


def _integer_run(tokens: list[str]) -> int:
    """Longest chain of integers n, n+1, n+2, ... appearing in order among the tokens."""
    best = run = 0
    previous = None
    for token in tokens:
        if not token.isdigit():
            continue
        value = int(token)
        run = run + 1 if previous is not None and value == previous + 1 else 1
        previous = value
        best = max(best, run)
    return best


@lru_cache(maxsize=8192)
def artifact_reason(quote: str) -> str | None:
    """Why ``quote`` is a page artifact rather than a fact, or None (remembered per chunk text: it is the chunk's,
    whatever the question)."""
    tokens = words(quote)
    if len(tokens) < MIN_WORDS:
        return "too short"
    numeric = sum(t.replace(".", "").replace(",", "").isdigit() for t in tokens)
    if len(tokens) - numeric < MIN_PROSE_WORDS:  # numbers with real prose around them are a fact, not an artifact
        if numeric / len(tokens) > 0.5:
            return "mostly numbers"
        if _integer_run(tokens) >= 5:
            return "line-number run"
    leaders = len(_DOT_LEADER.findall(quote))
    if leaders >= 2 or (leaders and "table of contents" in " ".join(tokens)):
        return "table of contents"
    contacts = sum(bool(p.search(quote)) for p in (_EMAIL, _URL, _PHONE))
    if contacts >= 2:
        return "contact boilerplate"
    if disclaimer_share(quote) >= DISCLAIMER_SHARE:
        return "title-page disclaimer"
    return None


def is_artifact(quote: str) -> bool:
    return artifact_reason(quote) is not None


def similarity_key(quote: str) -> str:
    """Normalised first words: two quotes with the same key are the same passage."""
    return " ".join(passage_words(quote)[:KEY_WORDS])


def local_filter(facts: list[Fact], max_context_chunks: int,
                 fact_floor: float = 0.0) -> tuple[list[Fact], list[DroppedFact]]:
    kept: list[Fact] = []
    dropped: list[DroppedFact] = []
    seen: set[str] = set()
    for fact in facts:
        key = similarity_key(fact.quote)
        reason = ("ARTIFACT" if is_artifact(fact.quote)
                  else "NOT_RELEVANT" if fact.relevance is not None and fact.relevance < fact_floor
                  else ("DUPLICATE" if key in seen else None)
                  or ("MAX_CONTEXT_CHUNKS" if len(kept) >= max_context_chunks else None))
        if reason:
            dropped.append(DroppedFact(chunk_id=fact.chunk_id, reason=reason))
        else:
            seen.add(key)
            kept.append(fact)
    return kept, dropped
