"""R2.2 chunk selection: the frozen policy applied in a fixed order, every drop recorded with its code.

Order of the gates (each sees only what the previous ones kept, in rank order):

1. ordering rank_strict: rank ascending, chunk_id ascending on ties; the
   input's list order never matters;
2. sanitization; empty afterwards → DROP_EMPTY_AFTER_SANITIZE; a text that
   would start a prompt line with a section or evidence header →
   DROP_UNSAFE_STRUCTURE;
3. similarity floor → DROP_BELOW_SIMILARITY_FLOOR (the top similarity gate is
   the same floor: when the best chunk is under it, nothing passes);
4. near-duplicates → DROP_DUP: a chunk whose word 3-gram overlap with a better
   ranked kept chunk reaches overlap_ratio_threshold; the better rank stays;
5. per-knowledge cap → DROP_PER_KNOWLEDGE_CAP: each document keeps its best
   max_chunks_per_knowledge_id chunks, so the top document always keeps its
   best chunks and never loses all of them;
6. max_chunks → DROP_MAX_CHUNKS;
7. per-chunk token cap (max_chunk_token_ratio × max_evidence_tokens): a longer
   chunk is cut to its longest prefix of whole sentences that fits (words
   when even one sentence does not), flagged ``truncated``; never reworded;
8. evidence budget: chunks are added in rank order while the evidence block
   stays within max_evidence_tokens; the first that does not fit and every
   lower-ranked one → DROP_BUDGET. The selection is therefore always a prefix
   of the ranked candidates, so anchors never shift when a budget bites.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ...core.tokens import TokenCount
from ...models.assembly import MAX_HEADING_CHARS, MAX_HEADINGS, DropRecord, RetrievalResult, SelectedEvidence
from ...core.policy import SelectionPolicy
from ...core.text_units import heading_lines, split_sentences, words
from ...models.evidence import anchor, breaks_structure, render_evidence
from ...core.sanitize import sanitize

SHINGLE = 3


@dataclass
class Selection:
    evidence: list[SelectedEvidence] = field(default_factory=list)
    drops: list[DropRecord] = field(default_factory=list)

    def drop(self, chunk_id: str, code: str) -> None:
        self.drops.append(DropRecord(chunk_id=chunk_id, code=code))


_chunk_text = lru_cache(maxsize=8192)(sanitize)
"""A chunk's sanitized text, remembered per chunk text (the same chunk comes back with every question about it)."""


@lru_cache(maxsize=8192)
def _headings(chunk_text: str) -> tuple[str, ...]:
    """The chunk's heading lines as the prompt shows them (sanitized), at most ``MAX_HEADINGS``."""
    return tuple(h for h in map(sanitize, heading_lines(chunk_text)) if 0 < len(h) <= MAX_HEADING_CHARS)[:MAX_HEADINGS]


def rank_strict(rows: Sequence[RetrievalResult]) -> list[RetrievalResult]:
    return sorted(rows, key=lambda r: (r.rank, r.chunk_id))


@lru_cache(maxsize=4096)
def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Word 3-grams of the normalised text (the words themselves for texts under three words); remembered per text,
    as a chunk is compared with every chunk ranked above it."""
    tokens = words(text)
    if len(tokens) < SHINGLE:
        return frozenset((t,) for t in tokens)
    return frozenset(tuple(tokens[i:i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def overlap_ratio(a: str, b: str) -> float:
    """Share of the shorter text's word 3-grams found in the other: 1.0 when one contains the other."""
    sa, sb = shingles(a), shingles(b)
    smaller = min(len(sa), len(sb))
    return len(sa & sb) / smaller if smaller else 0.0


def truncate_to_tokens(text: str, limit: int, count: TokenCount) -> str:
    """The longest prefix of ``text`` within ``limit`` tokens: whole sentences if one fits, else whole words."""
    if count(text) <= limit:
        return text
    sentences = split_sentences(text)
    prefixes = [" ".join(sentences[:n]) for n in range(1, len(sentences) + 1)]
    prefixes = [p for p in prefixes if text.startswith(p)]
    best = _longest_fitting(prefixes, limit, count)
    if best:
        return best
    tokens = text.split(" ")
    return _longest_fitting([" ".join(tokens[:n]) for n in range(1, len(tokens) + 1)], limit, count)


def _longest_fitting(prefixes: list[str], limit: int, count: TokenCount) -> str:
    """Binary search over prefixes of growing length (token counts grow with them)."""
    lo, hi, best = 0, len(prefixes) - 1, ""
    while lo <= hi:
        mid = (lo + hi) // 2
        if count(prefixes[mid]) <= limit:
            best, lo = prefixes[mid], mid + 1
        else:
            hi = mid - 1
    return best


def select(rows: Sequence[RetrievalResult], policy: SelectionPolicy, count: TokenCount) -> Selection:
    out = Selection()
    passed: list[tuple[RetrievalResult, str]] = []
    for row in rank_strict(rows):
        text = _chunk_text(row.chunk_text)
        if not text:
            out.drop(row.chunk_id, "DROP_EMPTY_AFTER_SANITIZE")
        elif breaks_structure(text):
            out.drop(row.chunk_id, "DROP_UNSAFE_STRUCTURE")
        elif row.similarity_score < policy.min_similarity:
            out.drop(row.chunk_id, "DROP_BELOW_SIMILARITY_FLOOR")
        elif any(overlap_ratio(text, kept) >= policy.overlap_ratio_threshold for _, kept in passed):
            out.drop(row.chunk_id, "DROP_DUP")
        else:
            passed.append((row, text))

    per_knowledge: Counter[str] = Counter()
    capped: list[tuple[RetrievalResult, str]] = []
    for row, text in passed:
        if per_knowledge[row.knowledge_id] >= policy.max_chunks_per_knowledge_id:
            out.drop(row.chunk_id, "DROP_PER_KNOWLEDGE_CAP")
        elif len(capped) >= policy.max_chunks:
            out.drop(row.chunk_id, "DROP_MAX_CHUNKS")
        else:
            per_knowledge[row.knowledge_id] += 1
            capped.append((row, text))

    full = False
    for row, text in capped:
        if full:
            out.drop(row.chunk_id, "DROP_BUDGET")
            continue
        cut = truncate_to_tokens(text, policy.chunk_token_cap, count)
        candidate = SelectedEvidence(
            chunk_id=row.chunk_id, knowledge_id=row.knowledge_id, rank=row.rank,
            similarity_score=row.similarity_score, citation_anchor=anchor(len(out.evidence)),
            sanitized_text=cut or text, pdf=row.pdf, page=row.page, truncated=cut != text,
            headings=list(_headings(row.chunk_text)),
        )
        if not cut or count(render_evidence([*out.evidence, candidate])) > policy.max_evidence_tokens:
            full = True
            out.drop(row.chunk_id, "DROP_BUDGET")
        else:
            out.evidence.append(candidate)
    return out
