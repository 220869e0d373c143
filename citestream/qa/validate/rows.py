"""R5 on one accepted row: citation markers, every sentence cited, no ids, no injection echo, no meta commentary,
grounded in the row's own chunk (``grounding_check``)."""

from __future__ import annotations

import re

from ...core.injection import INJECTION
from ...core.text_units import passage_words, words
from ...models.assembly import AnswerBundle, SelectedEvidence
from .grounding_check import answer_sentences, grounding, word_seq_in
from .synthesis import ValidationFailure

CITATION = re.compile(r"\[C\d+\]")
# Anything written like an anchor: [c0], [ C0 ], [C 0], [C0, C1], [C0-C2]. Only the exact form [C0] is allowed.
_ANCHOR_LIKE = re.compile(r"\[\s*c\s*\d+[^\]\n]{0,40}\]", re.IGNORECASE)
_ID_WORDS = re.compile(r"\b(?:chunk|knowledge)[ _-]?ids?\b|source=|#page=", re.IGNORECASE)
# Instructions a model may echo from a hostile document or user; never an answer, even when quoted.
# Talk about the system, the prompt or the sources instead of the subject. Allowed only as a verbatim quote.
_META = re.compile(
    r"\bevidence\b|\bexcerpts?\b|\bsnippets?\b|\bchunks?\b|\bas an ai\b|\blanguage model\b|\bassistant\b"
    r"|\b(?:these|the above|my) instructions\b|\bthe prompt\b|\bthe question\b"
    r"|\bI (?:cannot|can't|can not|don't|do not|am unable|am not able)\b"
    r"|\b(?:based on|according to|from|in) the (?:provided|given|supplied|above|available|cited) "
    r"(?:context|text|sources?|documents?|information|passages?|materials?)\b"
    r"|\bthe (?:provided|given|supplied) (?:context|text|sources?|documents?|information|passages?|pdfs?)\b",
    re.IGNORECASE,
)


def _quoted_from(sentence: str, match: re.Match, source_words: tuple[str, ...]) -> bool:
    """True when the match, with one word either side, is a verbatim word sequence of the source."""
    before = words(sentence[: match.start()])[-1:]
    after = words(sentence[match.end():])[:1]
    return word_seq_in(tuple(before + words(match.group(0)) + after), source_words)


def check_row(sentence: str, evidence: SelectedEvidence, bundle: AnswerBundle) -> tuple[str, float]:
    """R5 on one accepted row; returns its text without markers and its lowest grounding support."""
    markers = CITATION.findall(sentence)
    malformed = [m for m in _ANCHOR_LIKE.findall(sentence) if not CITATION.fullmatch(m)]
    if malformed:
        raise ValidationFailure("MALFORMED_CITATION", ", ".join(malformed[:3]))
    if not markers:
        raise ValidationFailure("UNCITED_SENTENCE", sentence[:80])
    unknown = sorted({m[1:-1] for m in markers} - set(bundle.anchor_map))
    if unknown:
        raise ValidationFailure("UNKNOWN_ANCHOR", ", ".join(unknown))
    if f"[{evidence.citation_anchor}]" not in markers:
        raise ValidationFailure("ANCHOR_MISMATCH", f"row for {evidence.citation_anchor} cites {sorted(set(markers))}")
    plain = _without_markers(sentence)
    supports = []
    for part in answer_sentences(sentence):
        text = _without_markers(part)
        _check_wording(text, bundle, evidence)  # per sentence: "word before" never spans two sentences
        if not CITATION.search(part):
            raise ValidationFailure("UNCITED_SENTENCE", part[:80])
        result = grounding(text, evidence.sanitized_text)
        if not result.supported:
            raise ValidationFailure("UNGROUNDED_SENTENCE", f"{result.reason}: {text[:80]}")
        supports.append(result.support)
    return plain, min(supports)


def _without_markers(text: str) -> str:
    plain = " ".join(CITATION.sub(" ", text).split())
    return re.sub(r" ([.,;:!?])", r"\1", plain)  # one space at most: ``plain``'s spaces are single


def _check_wording(plain: str, bundle: AnswerBundle, evidence: SelectedEvidence) -> None:
    """No ids, no injection echo, no meta commentary (unless quoted verbatim from the cited chunk)."""
    lowered = plain.lower()
    ids = {e.chunk_id for e in bundle.selected_evidence} | {e.knowledge_id for e in bundle.selected_evidence}
    # the substring test first: an id is rarely there, and its pattern would be compiled anew for every id
    leaked = sorted(i for i in ids if i.lower() in lowered
                    and re.search(rf"(?<![\w-]){re.escape(i.lower())}(?![\w-])", lowered))
    id_word = _ID_WORDS.search(plain)
    if leaked or id_word:
        raise ValidationFailure("IDS_IN_ANSWER", ", ".join(leaked) or (id_word.group(0) if id_word else ""))
    injection = INJECTION.search(plain)
    if injection:
        raise ValidationFailure("INJECTION_ECHO", injection.group(0)[:60])
    source_words = passage_words(evidence.sanitized_text)
    for match in _META.finditer(plain):
        if not _quoted_from(plain, match, source_words):
            raise ValidationFailure("META_COMMENTARY", match.group(0))
