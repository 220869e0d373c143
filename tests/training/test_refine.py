"""The second training stage: groups mined with the real embedder, and one refine step on the shipped model."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from citestream.relevance import RelevanceModel
from citestream.relevance.scorer import DELTA_FILE, METADATA_FILE, SHIPPED_DIR, file_sha256
from citestream.training.corpus import CorpusChunk
from citestream.training.groups import Group, mine_groups
from citestream.training.pairs import Pair
from citestream.training.refine import RefineConfig, refine
from citestream.core.text_units import sentence_units

TEXTS = [
    "FDA has 60 days after it receives an NDA to decide whether to file it for review. "
    "The filing review checks that the application is complete enough for a substantive review. "
    "A refuse-to-file letter lists the deficiencies that keep the application from being filed.",
    "The NDA must include the proposed labeling for the drug. Labeling describes the indications and dosage. "
    "Sponsors may request a meeting with the review division before they submit the application.",
    "Stability studies should cover the proposed shelf life of the drug product under storage conditions. "
    "Accelerated studies at elevated temperature support a provisional expiration date for the product.",
]
CHUNKS = [CorpusChunk("nda.pdf", "FDA", i + 1, "", i, text, tuple(sentence_units(text)))
          for i, text in enumerate(TEXTS)]
QUESTIONS = [
    {"pdf": "nda.pdf", "chunk": 0, "unit": 0, "question": "How long does FDA take to decide on filing an NDA?"},
    {"pdf": "nda.pdf", "chunk": 2, "unit": 0, "question": "How long should stability studies run?"},
]
FDAQA = [{"title": "Meetings", "question": "Can a sponsor meet FDA before submitting an application?",
          "answer": "Yes, a sponsor may request a pre-submission meeting with the review division. "
                    "The request should list the questions the sponsor wants to discuss."},
         {"title": "Meetings", "question": "What should a meeting request include?",
          "answer": "A meeting request should include the product name, the proposed agenda and the questions. "
                    "FDA answers the request within 14 days of receiving it."}]


def test_groups_put_the_answering_sentence_first_and_never_restate_it(embedder):
    groups = mine_groups(CHUNKS, QUESTIONS, FDAQA, embedder.embed, negatives=3)
    again = mine_groups(CHUNKS, QUESTIONS, FDAQA, embedder.embed, negatives=3)
    assert groups == again  # deterministic for the seed
    by_question = {g.question: g for g in groups}
    nda = by_question[QUESTIONS[0]["question"]]
    assert nda.source == "llm" and nda.texts[0] == CHUNKS[0].units[0]
    assert 1 <= len(nda.texts) - 1 <= 3 and nda.texts[0] not in nda.texts[1:]
    meeting = by_question[FDAQA[0]["question"]]
    assert meeting.source == "fdaqa" and meeting.texts[0].startswith("Yes, a sponsor may request")
    assert all("pre-submission meeting" not in t for t in meeting.texts[1:])  # its own answer is never a negative


def test_one_refine_step_writes_a_model_the_loader_reads(tmp_path):
    groups = [Group("How long does FDA take to decide on filing an NDA?",
                    (CHUNKS[0].units[0], CHUNKS[1].units[0], CHUNKS[2].units[0]), "llm", "nda.pdf")] * 4
    replay = [Pair("According to the EMA, how long does FDA take to file an NDA?", CHUNKS[0].units[0], 0, "authority",
                   "sentence", "nda.pdf")]
    shipped = RelevanceModel("", max_length=64, embedding_weight=0)  # the scoring model, loaded once per process
    before = shipped.cross_pairs([(groups[0].question, t) for t in groups[0].texts])
    meta = refine(SHIPPED_DIR, groups, replay, tmp_path, RefineConfig(max_length=64), {"note": "test"})
    # training changed a copy of its own, not the cross-encoder the process scores with
    assert np.array_equal(RelevanceModel("", max_length=64, embedding_weight=0).cross_pairs(
        [(groups[0].question, t) for t in groups[0].texts]), before)
    assert meta["refine"]["groups"] == 4 and meta["refine"]["replayed_pairs"] == 1 and meta["refine"]["note"] == "test"
    assert "thresholds" not in meta  # chosen for the base: a refined model needs its own
    written = json.loads((tmp_path / METADATA_FILE).read_text())
    assert written["refine"]["config"]["lr"] == RefineConfig().lr
    assert file_sha256(tmp_path / DELTA_FILE) != file_sha256(SHIPPED_DIR / DELTA_FILE)
    scores = RelevanceModel(str(tmp_path), embedding_weight=0).score(groups[0].question, list(groups[0].texts))
    assert np.all((scores >= 0) & (scores <= 1))


def test_refine_refuses_a_missing_base_and_writing_over_its_base(tmp_path, capsys):
    from argparse import Namespace

    from citestream.training.make import cmd_refine

    assert cmd_refine(Namespace(base=str(tmp_path / "none"), out=str(tmp_path / "out"))) == 2
    assert "no first-stage model" in capsys.readouterr().err
    assert cmd_refine(Namespace(base=str(SHIPPED_DIR), out=str(SHIPPED_DIR))) == 2
    assert "--out must differ from --base" in capsys.readouterr().err


def test_the_embedder_trains_on_groups_and_writes_what_the_relevance_embedder_loads(tmp_path, monkeypatch):
    """`citestream scorer embedder`'s training, a few steps: typo copies beside their originals, token embeddings
    left as they were (the artifact is the encoder layers only), and the folder loads as the blend's embedder."""
    from citestream.config import get_settings
    from citestream.embedding import relevance_embedder_at, get_relevance_embedder, model_path, relevance_embedder_name
    from citestream.training.embedder import EmbedderConfig, examples, train_embedder

    groups = [Group(q["question"], (CHUNKS[q["chunk"]].units[0], *(CHUNKS[c].units[0] for c in range(3)
                                                                    if c != q["chunk"])), "llm", "nda.pdf")
              for q in QUESTIONS] * 4
    config = EmbedderConfig(batch=4, negatives=2, reworded=1.0, max_length=64)
    rows = examples(groups, {}, config, {"nda.pdf": "FDA"})
    assert len(rows) > len(groups) and all(len(r.texts) == 3 for r in rows)  # answer, two negatives
    assert {r.texts for r in rows} == {g.texts[:3] for g in groups}  # a typo copy keeps its texts
    with_contrasts = [r for r in rows if r.contrasts]
    assert with_contrasts and all(r.question not in r.contrasts for r in with_contrasts)
    assert max(len(r.contrasts) for r in rows) > 1  # every construction that can be built, not one of them
    capped = examples(groups, {}, replace(config, contrasts=1), {"nda.pdf": "FDA"})
    assert max(len(r.contrasts) for r in capped) == 1
    meta = train_embedder(model_path(), rows, tmp_path, config)
    assert meta["examples"] == len(rows) and meta["config"]["negatives"] == 2
    from safetensors.torch import load_file

    assert not any(k.startswith("embeddings.") for k in load_file(str(tmp_path / DELTA_FILE)))
    monkeypatch.setenv("CITESTREAM_RELEVANCE_EMBEDDER", str(tmp_path))
    get_settings.cache_clear()
    try:
        trained = get_relevance_embedder()
        assert trained.name == relevance_embedder_name() == f"{meta['name']}@{file_sha256(tmp_path / DELTA_FILE)[:12]}"
        vectors = trained.embed([QUESTIONS[0]["question"], CHUNKS[0].units[0]])
        assert vectors.shape == (2, 384) and np.isfinite(vectors).all()
    finally:
        monkeypatch.delenv("CITESTREAM_RELEVANCE_EMBEDDER")
        get_settings.cache_clear()
        relevance_embedder_at.cache_clear()


def test_contrast_questions_are_built_so_the_sentence_does_not_answer_them():
    """Each construction, seen over many draws: narrowed to a case the sentence does not name, moved to another
    authority only when the document is FDA's, or presupposing the sentence falsified (its number changed)."""
    import random

    from citestream.training.embedder import contrast_questions

    question, answer = "How long does FDA take to decide on filing an NDA?", TEXTS[0].split(". ")[0] + "."
    rng = random.Random(3)
    fda = {q for _ in range(20) for q in contrast_questions(question, answer, "FDA", rng)}
    ich = {q for _ in range(20) for q in contrast_questions(question, answer, "ICH", rng)}
    assert any(q.startswith("According to ") and "FDA" not in q.split(",")[0] for q in fda)
    assert not any(q.startswith("According to ") for q in ich)
    assert any(q.startswith(question.rstrip("?")) and q != question for q in fda)  # narrowed
    premises = [q for q in fda if "60 days" not in q and "days after it receives" in q]
    assert premises  # the sentence with its number changed, presupposed
