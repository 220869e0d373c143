"""Phase A retrieval against the real Postgres: hybrid candidates, scores, MMR, floor, fallback and its gate,
query expansion, scope, determinism, the debug text, and the GroundingPack with its failure modes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from citestream.models import QuestionEvent
from citestream.core.policy import Policy, RetrievalPolicy
from citestream.qa.retrieve import (
    EXPANSION_RULES, ExpansionRule, clamp_top_k, expand_query, find_facts, format_facts, grounding_pack,
)
from citestream.qa.retrieve.fusion import mmr, rrf
from citestream.qa.retrieve.gate import pdf_name_matches
from citestream.store import ChunkSearch, ChunkStore, engine_for
from citestream.store import search as search_module
from citestream.store.search import Ranked

from tests.support.common import new_request_id
from tests.support.retrieval import DOCUMENTS, ingest_documents

POLICY = Policy()


@pytest.fixture(scope="session")
def indexed(engine, embedder, smoke_ingested):
    ingest_documents(engine, embedder)
    return ChunkSearch(engine)


def _ask(search, embedder, question, policy=POLICY, **kw):
    event = QuestionEvent(request_id=new_request_id("retr"), question=question, **kw)
    return find_facts(event, search, "idx-test", embedder, policy)


def _policy(**changes) -> Policy:
    return Policy(retrieval=dataclasses.replace(RetrievalPolicy(), **changes))


# --- the frozen contract values ---------------------------------------------------------------------

def test_policy_carries_the_contract_values():
    rp = RetrievalPolicy()
    assert (rp.top_k, rp.max_context_chunks, rp.min_similarity, rp.use_mmr, rp.mmr_lambda) == (8, 6, 0.20, True, 0.60)
    assert (rp.fallback_min_similarity, rp.fallback_only_if_empty) == (0.18, True)
    assert rp.mode == "hybrid"


# --- hybrid candidates ------------------------------------------------------------------------------

def test_hybrid_trace_lists_semantic_and_bm25_stages(indexed, embedder):
    record = _ask(indexed, embedder, "What are the three stages of process validation?")
    trace = record.retrieval_trace
    assert trace.stages[:2] == ["semantic", "bm25"] and "rrf" in trace.stages and "mmr" in trace.stages
    assert trace.semantic_k >= 8 and trace.bm25_k >= 8 and trace.rerank_k is None
    assert record.facts and record.facts[0].pdf == "process-validation-lifecycle"


def test_lexical_list_finds_an_exact_identifier(indexed):
    """The document holding the identifier and its verbatim copy (the fixture's duplicate) tie: either comes first."""
    hits = indexed.lexical("lot release code XQ7741", "MIXED", 5)
    assert len(hits) >= 2 and hits[0].score == pytest.approx(hits[1].score)
    assert {h.chunk_id.rsplit("-chunk-", 1)[0] for h in hits[:2]} == {"lot-release-codes", "lot-release-codes-copy"}


@pytest.mark.parametrize("ranker", ["bm25", "ts_rank_cd"])
def test_both_lexical_rankers_rank_the_matching_chunk_first(indexed, ranker):
    hits = indexed.lexical("audit trail retention electronic records", "MIXED", 200, ranker=ranker)
    # The suite's database may also hold corpus PDFs (21 CFR Part 11 is on topic); rank among this file's documents.
    ours = [h for h in hits if h.chunk_id.rsplit("-chunk-", 1)[0] in DOCUMENTS]
    assert ours[0].chunk_id.startswith("electronic-records-retention-chunk-")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_parent_lexical_hits_stand_for_a_child_of_that_parent(indexed, embedder, engine):
    from sqlalchemy import text

    query = "quality unit batch record lot release"
    hits = indexed.lexical_parents(query, embedder.embed_one(query), "MIXED", 5)
    assert hits
    with engine.connect() as conn:
        kinds = dict(conn.execute(text("SELECT chunk_id, kind FROM chunks WHERE chunk_id = ANY(:ids)"),
                                  {"ids": [h.chunk_id for h in hits]}).all())
    assert set(kinds.values()) == {"child"}
    assert hits[0].chunk_id.startswith("lot-release-codes")  # the original or its copy: equal scores


def test_lexical_query_of_only_stopwords_returns_nothing(indexed):
    assert indexed.lexical("what is the of and", "MIXED", 5) == []


def test_rrf_sums_reciprocal_ranks_and_breaks_ties_by_id():
    a = [Ranked("x", 9.0), Ranked("y", 5.0)]
    b = [Ranked("y", 0.9), Ranked("z", 0.1)]
    fused = dict(rrf([(a, 1.0), (b, 1.0)], k=60))
    assert fused["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["x"] == pytest.approx(1 / 61) and fused["z"] == pytest.approx(1 / 62)
    assert [cid for cid, _ in rrf([([Ranked("b", 1)], 1.0), ([Ranked("a", 1)], 1.0)])] == ["a", "b"]


def test_default_weights_let_both_bm25_firsts_outrank_a_chunk_twentieth_in_all_three_lists():
    """qa-v1.1, heavy BM25 multipliers: at equal weights the chunk 20th everywhere won; now both BM25 lists'
    first choice does."""
    def ranked(name: str, first: str | None) -> list[Ranked]:
        head = [first] if first else []
        rest = [f"{name}-{i}" for i in range(19 - len(head))]
        return [Ranked(cid, 1.0) for cid in [*head, *rest, "everywhere"]]

    rp = RetrievalPolicy()
    dense, child, parent = ranked("d", None), ranked("c", "lexical-first"), ranked("p", "lexical-first")
    weighted = [cid for cid, _ in rrf([(dense, rp.semantic_weight), (child, rp.child_lexical_weight),
                                       (parent, rp.parent_lexical_weight)], rp.rrf_k)]
    equal = [cid for cid, _ in rrf([(dense, 1.0), (child, 1.0), (parent, 1.0)], rp.rrf_k)]
    assert weighted[0] == "lexical-first"
    assert equal[0] == "everywhere"


# --- scores and ordering --------------------------------------------------------------------------

def test_scores_are_cosine_similarities_computed_in_sql_even_for_lexical_only_candidates(indexed, embedder):
    query = "lot release code XQ7741"
    vector = embedder.embed_one(query)
    lexical_ids = [h.chunk_id for h in indexed.lexical(query, "MIXED", 10)]
    for hit in indexed.hydrate(lexical_ids, [vector]):
        assert 0.0 <= hit.score <= 1.0
        assert hit.score == pytest.approx(max(0.0, float(np.dot(hit.embedding, vector))), abs=1e-4)


def test_facts_are_ordered_by_cosine_highest_first_and_capped_at_top_k(indexed, embedder):
    record = _ask(indexed, embedder, "electronic signatures and audit trails for electronic records", top_k=50)
    scores = [f.score for f in record.facts]
    assert record.top_k == 8 and 1 <= len(scores) <= 8
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)


def test_the_relevance_model_reranks_the_pool_and_orders_the_facts(indexed, embedder, relevance):
    """rag-loop-acceptance §3.3 / design notes Chain 2: the model scores the fused pool (rerank_k), each fact
    carries its passage score (its best sentence's), and the facts come best first."""
    question = "Which unit issues the lot release code carried on each batch record?"
    event = QuestionEvent(request_id=new_request_id("retr"), question=question)
    record = find_facts(event, indexed, "idx-test", embedder, POLICY, relevance)
    trace = record.retrieval_trace
    assert "rerank" in trace.stages and trace.rerank_k == record.relevance.scored >= len(record.facts) >= 1
    scores = [f.relevance for f in record.facts]
    assert scores == sorted(scores, reverse=True)
    for fact in record.facts:
        assert fact.relevance == pytest.approx(relevance.score_passages(question, [fact.quote])[0], abs=1e-5)
    assert record.facts[0].doc_id.startswith("lot-release-codes") and record.no_answer is None


def test_the_backstop_refuses_when_the_best_passage_scores_below_it(indexed, embedder, relevance):
    """The hard backstop: the best passage below ``RelevancePolicy.backstop`` → no facts, NOT_RELEVANT, with the
    best score on the record. The same question passes at the policy's backstop."""
    question = "Which unit issues the lot release code carried on each batch record?"
    strict = dataclasses.replace(POLICY, relevance=dataclasses.replace(POLICY.relevance, backstop=0.99))
    event = QuestionEvent(request_id=new_request_id("retr"), question=question)
    record = find_facts(event, indexed, "idx-test", embedder, strict, relevance)
    assert record.relevance.scored >= 1 and record.relevance.best < 0.99
    assert record.facts == [] and record.no_answer.code == "NOT_RELEVANT"
    assert f"< backstop {0.99}" in record.no_answer.detail
    passed = find_facts(event, indexed, "idx-test", embedder, POLICY, relevance)
    assert passed.no_answer is None and passed.relevance.best == record.relevance.best >= POLICY.relevance.backstop


# --- MMR --------------------------------------------------------------------------------------------

def test_mmr_prefers_a_diverse_item_over_a_near_duplicate():
    vectors = np.array([[1.0, 0.0], [0.999, 0.04], [0.0, 1.0]])
    assert mmr([1.0, 0.95, 0.8], vectors, 2, 0.60) == [0, 2]
    assert mmr([1.0, 0.95, 0.8], vectors, 2, 1.0) == [0, 1]  # λ = 1 is plain relevance


def test_mmr_never_takes_a_copy_and_keeps_a_sibling_section_when_relevance_is_scaled():
    """Two sections of one guidance are ~0.87 alike; a copy is ~1. On raw relevance (~0.5 against ~0.25) MMR trades
    the sibling for an unrelated item; on relevance rescaled over the pool it keeps it, and a copy never goes in."""
    sibling = np.array([[1.0, 0.0, 0.0], [0.87, 0.49, 0.0], [0.3, 0.0, 0.95], [1.0, 0.001, 0.0]])
    raw = [0.53, 0.50, 0.25, 0.529]
    assert mmr(raw, sibling, 2, 0.60, duplicate=0.95) == [0, 2]  # classic MMR: the unrelated item
    scaled = [(r - min(raw)) / (max(raw) - min(raw)) for r in raw]
    assert mmr(scaled, sibling, 2, 0.60, duplicate=0.95) == [0, 1]  # the sibling; the copy (index 3) never


def test_mmr_is_deterministic_on_ties():
    vectors = np.eye(3)
    assert mmr([0.5, 0.5, 0.5], vectors, 3, 0.6) == [0, 1, 2]


def test_mmr_over_real_candidates_skips_duplicated_text(indexed, embedder):
    question = "Who issues the lot release code and reviews the batch record before release?"
    duplicates = {"lot-release-codes", "lot-release-codes-copy"}
    without = _ask(indexed, embedder, question, policy=_policy(top_k=2, use_mmr=False))
    with_mmr = _ask(indexed, embedder, question, policy=_policy(top_k=2))
    assert {f.doc_id for f in without.facts} == duplicates  # plain relevance takes both copies
    assert len({f.doc_id for f in with_mmr.facts} & duplicates) == 1  # MMR takes one copy and something new
    assert len(with_mmr.facts) == 2


# --- floor, fallback and its gate -------------------------------------------------------------------

def test_unrelated_question_returns_no_facts_and_no_fallback(indexed, embedder):
    record = _ask(indexed, embedder, "What is the boiling point of liquid nitrogen at sea level?")
    assert all(f.score >= 0.20 for f in record.facts)
    low = _ask(indexed, embedder, "zebra migration across the serengeti grasslands")
    assert low.facts == [] and low.fallback_used is False


def _top_score(search, embedder, question) -> float:
    return search.dense_search(embedder.embed_one(question), "MIXED", 1)[0].score


def test_fallback_runs_only_when_nothing_passes_the_floor_and_its_gate_accepts(indexed, embedder):
    question = "process validation stages"  # the top PDF name shares 'process' and 'validation'
    top = _top_score(indexed, embedder, question)
    # Something passes the floor: no fallback.
    normal = _ask(indexed, embedder, question, policy=_policy(min_similarity=top - 0.05,
                                                             fallback_min_similarity=top - 0.10))
    assert normal.facts and normal.fallback_used is False
    # Nothing passes the floor, top-1 reaches the fallback floor and its PDF name matches: fallback.
    fallback = _ask(indexed, embedder, question, policy=_policy(min_similarity=top + 0.01,
                                                               fallback_min_similarity=top - 0.01))
    assert fallback.fallback_used is True and fallback.facts
    assert fallback.facts[0].pdf == "process-validation-lifecycle"
    assert all(top - 0.01 <= f.score < top + 0.01 for f in fallback.facts)
    # Top-1 below the fallback floor: nothing.
    below = _ask(indexed, embedder, question, policy=_policy(min_similarity=top + 0.02,
                                                            fallback_min_similarity=top + 0.01))
    assert below.facts == [] and below.fallback_used is False


def test_fallback_gate_rejects_a_top_pdf_whose_name_does_not_match_the_query(indexed, embedder):
    question = "What are the stages in the product lifecycle?"  # top PDF is process-validation-lifecycle
    hits = indexed.dense_search(embedder.embed_one(question), "MIXED", 1)
    assert not pdf_name_matches(hits[0].pdf, question) or hits[0].pdf == "process-validation-lifecycle"
    question = "Which stages does the approach define?"
    top = _top_score(indexed, embedder, question)
    top_pdf = indexed.dense_search(embedder.embed_one(question), "MIXED", 1)[0].pdf
    assert not pdf_name_matches(top_pdf, question)
    record = _ask(indexed, embedder, question, policy=_policy(min_similarity=top + 0.01,
                                                             fallback_min_similarity=top - 0.01))
    assert record.facts == [] and record.fallback_used is False


def test_pdf_name_gate_matches_keywords_and_document_hints():
    assert pdf_name_matches("Q9_Guideline.pdf", "What does ICH Q9 say about risk?")
    assert pdf_name_matches("21CFR-Part-11.pdf", "electronic signatures under part 11")
    assert not pdf_name_matches("Q9_Guideline.pdf", "What is a design space?")


# --- query expansion --------------------------------------------------------------------------------

def test_expansion_keeps_the_original_query_first_and_adds_only_missing_terms():
    assert expand_query("How is process validation done?") == ["How is process validation done?"]
    assert expand_query("What is continuous processing?") == [
        "What is continuous processing?", "What is continuous processing? continuous manufacturing ICH Q13"]
    assert expand_query("Continuous processing under ICH Q13?") == [
        "Continuous processing under ICH Q13?", "Continuous processing under ICH Q13? continuous manufacturing"]
    assert expand_query("continuous processing and continuous manufacturing in ICH Q13") == [
        "continuous processing and continuous manufacturing in ICH Q13"]


def test_every_expansion_rule_fires_on_its_trigger_and_adds_what_is_missing():
    for rule in EXPANSION_RULES:
        variants = expand_query(f"Tell me about {rule.trigger.upper()}.")
        assert len(variants) == 2 and all(term in variants[1] for term in rule.adds)


def test_a_questions_candidate_lists_are_read_in_one_transaction(indexed, embedder, monkeypatch):
    """issue 16 item 3: dense, child and parent lexical lists for every variant and the hydration share one
    connection (one pool checkout), with the same facts as the per-list connections they replaced."""
    from sqlalchemy import event

    from citestream.qa.retrieve.candidates import gather

    question = "What does guidance say about continuous processing of drug products?"
    variants = expand_query(question)
    vectors = embedder.embed(variants)
    indexed.warm(RetrievalPolicy().lexical_ranker)  # as the worker does at start (an update reads on its own)
    checkouts: list[object] = []
    lexemes: list[str] = []
    listener = lambda *args: checkouts.append(args)  # noqa: E731
    read_terms = search_module.query_terms
    monkeypatch.setattr(search_module, "query_terms",
                        lambda conn, query: lexemes.append(query) or read_terms(conn, query))
    event.listen(indexed.engine.pool, "checkout", listener)
    try:
        candidates = gather(variants, vectors, "MIXED", indexed, RetrievalPolicy(), 8)
    finally:
        event.remove(indexed.engine.pool, "checkout", listener)
    assert len(variants) == 2 and len(checkouts) == 1
    # the question's own lexemes come with the reading statement; another variant's are read once, for both kinds
    assert lexemes == variants[1:]
    assert candidates.hits
    per_list = ChunkSearch(indexed.engine)
    with indexed.reading(100, question) as reader:
        assert reader.index_version == ChunkStore(indexed.engine).index_version()  # read with its settings
        assert reader.lexical(question, "MIXED", 10) == per_list.lexical(question, "MIXED", 10)
        in_memory = reader.lexical(question, "MIXED", 10, "bm25_memory")  # with the lexemes read with the settings
        assert in_memory and in_memory == per_list.lexical(question, "MIXED", 10, "bm25_memory")
        assert reader.dense(vectors[0], "MIXED", 10) == per_list.dense(vectors[0], "MIXED", 10)


@pytest.mark.parametrize("question", ["What does guidance say about continuous processing of drug products?",
                                      "Which impurities must be reported?"])
def test_only_the_candidates_a_pool_can_take_are_hydrated_and_the_choice_is_the_same(indexed, embedder, question):
    """issue 16: every fused candidate gets its cosine, only the first ``keep`` above each floor their text and
    vector; the fallback gate still sees the best cosine of all, and MMR chooses exactly what it chose from all."""
    from citestream.qa.retrieve.acceptance import accept_chunks
    from citestream.qa.retrieve.candidates import gather

    rp = dataclasses.replace(RetrievalPolicy(), mmr_pool=3)
    variants = expand_query(question)
    vectors = embedder.embed(variants)
    every = gather(variants, vectors, "MIXED", indexed, rp, 2)
    pruned = gather(variants, vectors, "MIXED", indexed, rp, 2, keep=3)
    assert pruned.trace == every.trace and len(pruned.hits) <= 6 < len(every.hits)
    best = min(every.hits, key=lambda h: (-h.score, h.chunk_id))
    assert (pruned.top.chunk_id, pruned.top.pdf, pruned.top.score) == (best.chunk_id, best.pdf, best.score)
    for floor in (rp.min_similarity, rp.fallback_min_similarity):
        assert [h for h in pruned.hits if h.score >= floor][:3] == [h for h in every.hits if h.score >= floor][:3]
    assert accept_chunks(pruned, question, 2, rp) == accept_chunks(every, question, 2, rp)


def test_an_id_list_is_bound_as_one_text_and_a_separator_inside_an_id_is_refused(indexed):
    from citestream.store.db import any_of, driver_rows, joined

    with indexed.engine.connect() as conn:
        rows = driver_rows(conn, f"SELECT x FROM unnest(ARRAY['a', 'b c', 'd']) AS x WHERE {any_of('x', 'ids')}",
                           {"ids": joined(["b c", "d", "e"])})
    assert [r.x for r in rows] == ["b c", "d"]
    with pytest.raises(ValueError):
        joined(["a\x1fb"])


def test_a_new_rule_is_one_line_in_the_table():
    rules = (*EXPANSION_RULES, ExpansionRule("pqs", ("pharmaceutical quality system", "ICH Q10")))
    assert expand_query("What is a PQS?", rules)[1] == "What is a PQS? pharmaceutical quality system ICH Q10"


def test_continuous_processing_rule_retrieves_the_q13_document_and_merges_by_best_score(indexed, embedder):
    question = "What does guidance say about continuous processing of drug products?"
    record = _ask(indexed, embedder, question)
    assert record.retrieval_trace.expansions == expand_query(question) and len(record.retrieval_trace.expansions) == 2
    assert any(f.pdf == "continuous-manufacturing-q13" for f in record.facts)
    keys = [(f.pdf, f.page, f.chunk_id) for f in record.facts]
    assert len(keys) == len(set(keys))
    # Each fact keeps its best cosine over the variants.
    vectors = embedder.embed(record.retrieval_trace.expansions)
    for hit in indexed.hydrate([f.chunk_id for f in record.facts], list(vectors)):
        fact = next(f for f in record.facts if f.chunk_id == hit.chunk_id)
        assert fact.score == pytest.approx(max(float(np.dot(hit.embedding, v)) for v in vectors), abs=1e-4)


def test_the_query_is_searched_in_the_corpus_words_too(indexed, embedder):
    """qa-v1.1: "APR" is defined as "annual product review" in one document, read from Postgres; typos are
    read as the corpus spells the word."""
    for question, other in (("What must an APR summarise?", "annual product review"),
                            ("What does an annual product review summarise?", "APR")):
        record = _ask(indexed, embedder, question)
        assert record.retrieval_trace.expansions == [question, f"{question} {other}"]
        assert record.facts[0].pdf == "annual-product-review"
    assert _ask(indexed, embedder, "What is continuous manufacturing?").retrieval_trace.expansions == [
        "What is continuous manufacturing?"]
    typo = "What does an anual product reveiw summarise?"
    record = _ask(indexed, embedder, typo)
    assert record.retrieval_trace.expansions == [typo, "What does an annual product review summarise? APR"]
    assert record.facts[0].pdf == "annual-product-review"


# --- scope ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scope,expected", [("ICH", {"ICH"}), ("FDA", {"FDA"})])
def test_scope_is_enforced_in_sql(indexed, embedder, scope, expected):
    record = _ask(indexed, embedder, "continuous manufacturing and process validation lifecycle", scope=scope)
    assert record.facts and {f.authority for f in record.facts} == expected
    vector = embedder.embed_one("continuous manufacturing")
    assert all(h.authority in expected for h in indexed.dense_search(vector, scope, 50))


def test_mixed_scope_searches_every_authority(indexed, embedder):
    record = _ask(indexed, embedder, "continuous manufacturing and process validation lifecycle", scope="MIXED")
    assert {"ICH", "FDA"} <= {f.authority for f in record.facts}


def test_a_scope_with_no_documents_returns_empty_not_an_error(indexed, embedder):
    assert _ask(indexed, embedder, "process validation", scope="EMA").facts == []
    result = grounding_pack("process validation", "SOPS", 8, indexed, embedder, POLICY)
    assert result.status == "ok" and result.grounding.chunks == [] and result.total == 0


# --- determinism and the debug text -----------------------------------------------------------------

def test_the_same_question_twice_returns_identical_facts(indexed, embedder):
    question = "How long must audit trail documentation be retained?"
    first, second = _ask(indexed, embedder, question), _ask(indexed, embedder, question)
    assert first.facts and first.facts == second.facts
    assert first.retrieval_trace == second.retrieval_trace


def test_debug_text_contract_is_exact(indexed, embedder):
    record = _ask(indexed, embedder, "Who issues the lot release code XQ7741?")
    text = format_facts(record.facts)
    lines = text.splitlines()
    assert lines[0] == "FACTS:" and len(lines) == len(record.facts) + 1
    f = record.facts[0]
    quote = " ".join(f.quote.split())  # a chunk's line breaks never split a fact's line
    assert lines[1] == f'- "{quote}" (pdf="{f.pdf}", page={f.page}, chunk_id="{f.chunk_id}", score={f.score})'
    assert format_facts([]) == "FACTS:"


# --- GroundingPack (rag-loop-acceptance §1.2, §4) ---------------------------------------------------

@pytest.mark.parametrize("query", ["stroke prevention anticoagulants atrial fibrillation",
                                   "amyloid treatment Alzheimer's cognitive decline"])
def test_grounding_pack_for_the_smoke_queries(indexed, embedder, query):
    result = grounding_pack(query, "MIXED", 8, indexed, embedder, POLICY)
    pack = result.grounding
    assert result.status == "ok" and result.error is None and pack is not None
    assert 1 <= len(pack.chunks) <= 8 and result.total == len(pack.chunks)
    assert all(c.chunk_id and c.doc_id and c.text and 0.0 <= c.score <= 1.0 for c in pack.chunks)
    assert [c.score for c in pack.chunks] == sorted((c.score for c in pack.chunks), reverse=True)
    assert [c.chunk_id for c in pack.citations] == [c.chunk_id for c in pack.chunks]
    assert "semantic" in pack.retrieval_trace.stages and "bm25" in pack.retrieval_trace.stages
    assert pack.chunks[0].doc_id == ("smoke-001" if "stroke" in query else "smoke-003")
    assert result.model_validate_json(result.model_dump_json()) == result


@pytest.mark.parametrize("requested,clamped", [(0, 1), (-1, 1), (999, 100), (3, 3)])
def test_grounding_top_k_is_clamped_and_respected(indexed, embedder, requested, clamped):
    assert clamp_top_k(requested) == clamped
    result = grounding_pack("process validation lifecycle stages", "MIXED", requested, indexed, embedder, POLICY)
    assert result.status == "ok" and result.top_k == clamped and len(result.grounding.chunks) <= clamped


def test_failure_empty_query_is_a_validation_error(indexed, embedder):
    for query in ("", "   "):
        result = grounding_pack(query, "MIXED", 8, indexed, embedder, POLICY)
        assert result.status == "error" and result.error.code == "VALIDATION_ERROR" and result.grounding is None


def test_failure_missing_collection_is_task_failed(embedder, settings):
    missing = ChunkSearch(engine_for(settings.database_url.rsplit("/", 1)[0] + "/citestream_retr_no_such_db"))
    result = grounding_pack("process validation", "MIXED", 8, missing, embedder, POLICY)
    assert result.status == "error" and result.error.code == "TASK_FAILED"


def test_failure_empty_collection_is_ok_with_no_chunks(embedder, settings, database):
    from sqlalchemy import text

    from citestream import infra
    from citestream.store.tables import metadata

    name = "citestream_retr_empty"
    infra.servers(settings)[0].ensure_database(name)
    engine = engine_for(settings.database_url.rsplit("/", 1)[0] + "/" + name)
    with engine.begin() as conn:
        conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
    metadata.create_all(engine)
    engine.dispose()
    result = grounding_pack("process validation", "MIXED", 8, ChunkSearch(engine), embedder, POLICY)
    assert result.status == "ok" and result.grounding.chunks == [] and result.total == 0


def test_failure_zero_overlap_query_is_ok_with_no_chunks(indexed, embedder):
    result = grounding_pack("zebra migration across the serengeti grasslands", "MIXED", 8, indexed, embedder, POLICY)
    assert result.status == "ok" and result.grounding.chunks == []


def test_parallel_grounding_calls_with_the_same_query_are_identical(indexed, embedder):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: grounding_pack("electronic signatures audit trail", "MIXED", 8, indexed,
                                                         embedder, POLICY), range(4)))
    # calls that meet share the question embedding's pass (batching.Coalescer): the same chunks in the same order,
    # scores equal to float precision, not bit for bit (a batch's padding changes the last digits)
    first = results[0].grounding.chunks
    assert first
    for r in results:
        assert [(c.chunk_id, c.text) for c in r.grounding.chunks] == [(c.chunk_id, c.text) for c in first]
        assert all(abs(c.score - f.score) < 1e-6 for c, f in zip(r.grounding.chunks, first))
