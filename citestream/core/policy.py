"""The one versioned policy object: qa-contract-v1 retrieval values and R2_POLICY_V1 selection values.

Defaults are the contracts' frozen values. Changing any value is a policy
change: it must come with a new ``version`` and a before/after eval
(qa-contract-v1 §4), which is why the object is frozen.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .texts import PROMPT_REFUSAL_LOCK, REFUSAL_TEXT


@dataclass(frozen=True)
class RetrievalPolicy:
    """qa-contract-v1 §1 values, then the hybrid design of policy-qa-design-notes §2 (candidate sizes, fusion)."""

    top_k: int = 8
    max_context_chunks: int = 6
    min_similarity: float = 0.20
    use_mmr: bool = True
    mmr_lambda: float = 0.60
    fallback_min_similarity: float = 0.18
    fallback_only_if_empty: bool = True
    hnsw_ef_search: int = 100
    mode: str = "hybrid"                # hybrid | dense | lexical (the last two for measurement)
    semantic_k: int = 40                # dense candidates per query variant
    bm25_k: int = 40                    # lexical candidates per list (child text, parent text) per variant
    lexical_ranker: str = "bm25_memory"  # Okapi from the worker's copy | bm25 (the same in SQL) | ts_rank_cd
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    rrf_k: int = 60
    # "RRF with heavy BM25 multipliers" (design notes §2). qa-v1.1: each BM25 list weighs 2 (was 1); at equal
    # weights a chunk seen at middling ranks in all three lists outranked one that both BM25 lists put first.
    semantic_weight: float = 1.0
    child_lexical_weight: float = 2.0
    parent_lexical_weight: float = 2.0
    mmr_pool: int = 32                  # MMR chooses top_k among this many best fused candidates
    mmr_scaled: bool = True
    """qa-v2.7: MMR weighs the relevance model's scores rescaled over its pool (best 1, worst 0), so λ compares
    relevance and redundancy on one scale: raw scores span ~0.2-0.6 while sections of one guidance are ~0.87 alike,
    and MMR dropped the answering section for an unrelated chunk (docs/retrieval.md)."""
    mmr_duplicate: float = 0.95
    """A candidate this alike to one already chosen is a copy (a draft and its final guidance), never chosen."""
    corpus_variant: bool = True         # qa-v1.1: one more variant in the corpus' words (spelling, acronyms)


@dataclass(frozen=True)
class SelectionPolicy:
    """answer-assembly-contract R2.2 'Selection Policy Snapshot Used' (R2_POLICY_V1), frozen.

    ``min_similarity`` is the selection floor: the qa-contract fallback floor
    (0.18), so evidence retrieval accepted through its fallback gate is not
    dropped again here. Any change to a value is a new ``policy_version``.
    """

    policy_version: str = "R2_POLICY_V1"
    max_chunks: int = 6
    max_chunks_per_knowledge_id: int = 2
    max_evidence_tokens: int = 2200
    reserved_output_tokens: int = 800
    max_total_prompt_tokens: int = 3500
    max_chunk_token_ratio: float = 0.35
    overlap_ratio_threshold: float = 0.80
    ordering_mode: str = "rank_strict"
    sanitization_mode: str = "safe_normalize_v1"
    strict_no_evidence: bool = True
    min_similarity: float = 0.18

    def __post_init__(self) -> None:
        if self.ordering_mode != "rank_strict" or self.sanitization_mode != "safe_normalize_v1":
            raise ValueError("only ordering_mode rank_strict and sanitization_mode safe_normalize_v1 are implemented")
        if not (0 < self.max_chunk_token_ratio <= 1 and 0 < self.overlap_ratio_threshold <= 1):
            raise ValueError("ratios must be in (0, 1]")
        if min(self.max_chunks, self.max_chunks_per_knowledge_id, self.max_evidence_tokens) < 1:
            raise ValueError("chunk and token limits must be positive")
        if self.max_evidence_tokens + self.reserved_output_tokens >= self.max_total_prompt_tokens:
            raise ValueError("evidence plus reserved output must leave room for instructions and the question")

    @property
    def chunk_token_cap(self) -> int:
        """Per-chunk cap: no chunk may take more than this share of the evidence budget."""
        return int(self.max_chunk_token_ratio * self.max_evidence_tokens)

    def snapshot(self) -> dict[str, str | int | float | bool]:
        return asdict(self)


VALUE_SLOTS = frozenset({"duration", "frequency", "percentage", "count", "temperature", "money", "date", "quantity"})


@dataclass(frozen=True)
class RelevancePolicy:
    """The relevance model's gates (policy-qa-design-notes Chain 2; qa-v2). Probabilities from the model, each
    threshold chosen on the dev split of the qa-v2 set (docs/relevance.md) for the shipped model: a different
    model (``CITESTREAM_RERANKER_MODEL``) needs its own (``CITESTREAM_RELEVANCE_*``)."""

    rerank_pool: int = 32           # fused candidates the model scores per question (rerank_k; 16 before qa-v2.7)
    backstop: float = 0.30          # best candidate below this: nothing relevant, refuse (the hard backstop)
    fact_floor: float = 0.05        # Phase B: a fact below this is dropped (NOT_RELEVANT)
    answer_threshold: float = 0.40  # an answer sentence must score at least this (R5 NOT_ANSWERING; 0.60 before qa-v3)
    value_answer_threshold: float = 0.35  # ... when the question asks for a value (``VALUE_SLOTS``; 0.40 before)
    background_answer_threshold: float = 0.45  # ... when the background judge read the asker's situation (qa-v3.3)
    keep_ratio: float = 0.85        # further answer sentences must score this share of the best
    max_sentences: int = 2          # answer sentences the extractive backend quotes at most
    requirement_sentences: int = 6  # ... when the question asks what something requires (the answer's row limit)
    high_confidence: float = 0.85   # an answer is labelled High when its best sentence scores this (0.91 in qa-v3)
    high_margin: float = 0.0        # ... no passage it does not cite scores within this of it (0.10 in qa-v3)
    high_agreement: float = 0.90    # ... and the second judge scores one of its sentences this (qa-v3.2)

    def threshold_for(self, slots: tuple[str, ...], background: bool = False) -> float:
        """The score an answer sentence needs: lower when the question asks for one value (a time, a number), since
        a sentence must also hold a value of that kind (``core.slots.fills``); a coordinated question's parts
        (more than one slot) need the ordinary threshold. A question the background judge read (``background``)
        needs its own, chosen on dev (docs/experiments/2026-11-30-background.md)."""
        if len(slots) == 1 and slots[0] in VALUE_SLOTS:
            return self.value_answer_threshold
        return self.background_answer_threshold if background else self.answer_threshold

    def __post_init__(self) -> None:
        if not 0 <= self.fact_floor <= 1 or not 0 <= self.backstop <= 1 or not 0 < self.answer_threshold <= 1:
            raise ValueError("relevance thresholds are probabilities")
        if self.rerank_pool < 1 or self.max_sentences < 1 or not 0 < self.keep_ratio <= 1:
            raise ValueError("rerank_pool and max_sentences must be positive, keep_ratio in (0, 1]")


@dataclass(frozen=True)
class Policy:
    # qa-v3.6: the judge reads the 8 units ranked best by the cosine plus 0.4 times the share of the question's rare
    # words they hold, not by the cosine alone (``relevance.scorer.SHORTLIST_WORDS``;
    # docs/experiments/2026-12-03-shortlist-words.md).
    # qa-v3.5: a question asking what a term is gets the unit that defines it ("Hazard: ...", "X means ..."), alone,
    # when it passes the answer threshold (``core.definitions``; docs/experiments/2026-12-02-definitions.md).
    # qa-v3.4: a quoted unit brings the next one when that one's opening clause refers back to it ("If this occurs,
    # ...": ``text_units.continues``; docs/experiments/2026-12-01-reading-more.md).
    # qa-v3.3: a question with the asker's situation is read by the background judge, background and asking
    # sentence together, at answer threshold 0.45 (docs/experiments/2026-11-30-background.md).
    # qa-v3.2: the question judge of the transfer recipe, the claim judge apart; High asks both judges (0.85 and
    # 0.90) and a question without background (docs/relevance.md, "Confidence").
    # qa-v3: the judge (a cross-encoder trained on the written supervision, docs/judge.md) reads the cosine's 8 best
    # units of each scoring call, weight 0.7 beside the cosine's 0.3; answer threshold 0.40.
    # qa-v2.8: a question that names a regulator is answered from that regulator's documents whenever any are
    # indexed, whatever its scope field says (one without a contract scope by its documents' issuer;
    # qa/retrieve/scope.py)
    version: str = "qa-v3.6+R2_POLICY_V1"
    retrieval: RetrievalPolicy = field(default_factory=RetrievalPolicy)
    selection: SelectionPolicy = field(default_factory=SelectionPolicy)
    relevance: RelevancePolicy = field(default_factory=RelevancePolicy)
    refusal_text: str = REFUSAL_TEXT
    prompt_refusal_lock: str = PROMPT_REFUSAL_LOCK

    def thresholds(self) -> dict[str, float]:
        return {
            "min_similarity": self.retrieval.min_similarity,
            "fallback_min_similarity": self.retrieval.fallback_min_similarity,
            "selection_min_similarity": self.selection.min_similarity,
            "overlap_ratio_threshold": self.selection.overlap_ratio_threshold,
        }


DEFAULT_POLICY = Policy()
