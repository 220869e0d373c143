"""Does running several questions' model passes in one batch make them cheaper per question? (issue 16 item 2)

Each question's real work for the relevance model is built as the retrieve stage builds it: the fused candidates'
rerank pool, cut into quotable sentence units. In a running worker the units' vectors are already known (stored at
ingest, then held in memory), so a question's passes are the relevance embedder's pass over the question (when the
configured blend uses the cosine) and the cross-encoder's over the ``relevance_cross_k`` units closest in meaning
(when it uses the cross-encoder; none with the shipped cosine alone). Those passes are run with questions taken one at
a time and with 2, 4 and 8 questions in one call (what the model's ``Coalescer`` makes of the retrieve agent's
groups of ``questions_together``), arms interleaved round by round so a busy machine slows them alike. The
retrieval's question embedding is measured the same way (one question per call vs eight). Printed: ms per question
for each arm, and its ratio to one at a time; the outputs must not change (max |Δ| of vectors and probabilities).

    BENCH_BATCHING_QUESTIONS=32 BENCH_BATCHING_ROUNDS=3 python -m bench.batching
"""

from __future__ import annotations

import os
import time

import numpy as np

from citestream.config import get_settings
from citestream.embedding import get_embedder, get_relevance_embedder
from citestream.core.policy import Policy
from citestream.relevance import relevance_model_for
from citestream.qa.retrieve.acceptance import rerank_pool
from citestream.qa.retrieve.candidates import gather
from citestream.qa.retrieve.expansion import expand_query
from citestream.store import ChunkSearch, engine_for
from citestream.core.text_units import scored_units

from ._support import ensure_corpus, unique_questions

N = int(os.environ.get("BENCH_BATCHING_QUESTIONS", "32"))
ROUNDS = int(os.environ.get("BENCH_BATCHING_ROUNDS", "3"))
GROUPS = (1, 2, 4, 8)


def question_pairs(questions: list[str]) -> list[list[tuple[str, str]]]:
    """Per question, the (question, sentence) pairs its retrieval hands the cross-encoder."""
    policy, model = Policy(), relevance_model_for(get_settings())
    search, embedder = ChunkSearch(engine_for()), get_embedder()
    out = []
    for question in questions:
        variants = expand_query(question)
        candidates = gather(variants, embedder.embed(variants), "MIXED", search, policy.retrieval,
                            policy.retrieval.top_k)
        pool = rerank_pool(candidates, policy.retrieval, policy.relevance.rerank_pool)
        units = list(dict.fromkeys(u for hit in pool for u in scored_units(hit.text)))
        if model.embedding_weight:  # the model's own cosine picks what its cross-encoder reads
            vectors = get_relevance_embedder().embed([question, *units])
            closest = model.read_by_cross_encoder(np.clip(vectors[1:] @ vectors[0], 0.0, 1.0))
        else:
            closest = range(len(units))
        out.append([(question, units[i]) for i in sorted(closest)])
    return out


def main() -> None:
    ensure_corpus()
    questions = unique_questions(N, "batching")
    pairs = question_pairs(questions)
    model, embedder = relevance_model_for(get_settings()), get_embedder()
    cosine = get_relevance_embedder() if model.embedding_weight else None

    def passes(start: int, group: int) -> tuple[np.ndarray, np.ndarray]:
        """The relevance model's passes for questions ``start`` to ``start + group``, as one call each: the
        questions' vectors (none without the cosine) and their cross-encoder probabilities."""
        vectors = cosine.embed(questions[start:start + group]).ravel() if cosine is not None else np.zeros(0)
        return vectors, model.cross_pairs([p for q in pairs[start:start + group] for p in q])

    passes(0, 4)  # warm up
    spent = {g: 0.0 for g in GROUPS}
    embed_spent = {1: 0.0, 8: 0.0}
    outputs: dict[int, np.ndarray] = {}
    for _ in range(ROUNDS):
        for group in GROUPS:
            started = time.perf_counter()
            got = [passes(start, group) for start in range(0, N, group)]
            spent[group] += time.perf_counter() - started
            outputs[group] = np.concatenate([np.concatenate(part) for part in zip(*got)])  # vectors, then pairs
        for group in embed_spent:
            started = time.perf_counter()
            for start in range(0, N, group):
                embedder.embed(questions[start:start + group])
            embed_spent[group] += time.perf_counter() - started
    per_question = sum(map(len, pairs)) / N
    print(f"{N} questions, model {model.name}: the question's relevance-embedder pass "
          f"{'on' if cosine is not None else 'off'}, {per_question:.1f} cross-encoder pairs each (relevance_cross_k "
          f"{get_settings().relevance_cross_k}), {ROUNDS} rounds")
    print(f"{'questions per call':<20}{'ms/question':>12}{'vs one':>8}{'max |Δ|':>10}")
    one = spent[1] / (N * ROUNDS) * 1000
    for group in GROUPS:
        ms = spent[group] / (N * ROUNDS) * 1000
        print(f"{group:<20}{ms:>12.1f}{ms / one:>8.2f}{float(np.abs(outputs[group] - outputs[1]).max()):>10.1e}")
    single, batched = (embed_spent[g] / (N * ROUNDS) * 1000 for g in (1, 8))
    print(f"question embedding: {single:.1f} ms/question one at a time, {batched:.1f} in calls of 8 "
          f"({batched / single:.2f})")


if __name__ == "__main__":
    main()
