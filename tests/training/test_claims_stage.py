"""The cross-encoder's claims stage: claims built from corpus sentences, and one short training run on the shipped
model."""

from __future__ import annotations

import json
from dataclasses import replace

from citestream.relevance import RelevanceModel
from citestream.relevance.scorer import DELTA_FILE, METADATA_FILE, SHIPPED_DIR, file_sha256
from citestream.training.claims_stage import CONFIG, claims_pairs, tune_claims
from citestream.training.constructions import (
    changed_quantity, changed_restrictor, constructed_claims, flipped_polarity, swapped_actor)
from citestream.training.corpus import CorpusChunk
from citestream.core.text_units import sentence_units

TEXT = ("FDA selects the reference standard that applicants must use in bioequivalence studies. "
        "Working within the design space is not considered a change by the regulatory authorities. "
        "The applicant must notify FDA within 30 days of the first commercial marketing of the drug. "
        "Stability data should be provided for at least three primary batches of the drug product.")
CHUNKS = [CorpusChunk("g.pdf", "FDA", 1, "", 0, TEXT, tuple(sentence_units(TEXT)))]


def test_each_construction_changes_what_the_sentence_says():
    import random

    rng = random.Random(1)
    assert flipped_polarity("Working within the design space is not considered a change") == \
        "Working within the design space is considered a change"
    assert flipped_polarity("The applicant need not submit the records") == "The applicant must submit the records"
    assert swapped_actor("FDA selects the reference standard", rng).endswith("selects the reference standard")
    assert not swapped_actor("FDA selects the reference standard", rng).startswith("FDA")
    assert changed_quantity("within 30 days of marketing", rng) != "within 30 days of marketing"
    assert changed_restrictor("for at least three batches", rng) == "for no more than three batches"


def test_claims_are_deterministic_and_hold_every_construction():
    rows = constructed_claims(CHUNKS)
    assert rows == constructed_claims(CHUNKS)
    kinds = {kind for _, _, _, kind, _ in rows}
    assert {"restated", "polarity", "actor", "quantity", "restrictor"} <= kinds
    assert all((label == 1) == (kind == "restated") for _, _, label, kind, _ in rows)
    assert all(p.source == "claims" and p.kind == "sentence" for p in claims_pairs(CHUNKS))


def test_a_short_claims_stage_writes_a_model_the_loader_reads(tmp_path):
    claims = claims_pairs(CHUNKS)
    meta = tune_claims(SHIPPED_DIR, claims, claims[:4], tmp_path, ("held.pdf",),
                       replace(CONFIG, max_length=64, batch_size=8))
    assert meta["claims"]["claims_pairs"] == len(claims) and meta["claims"]["held_out_pairs"] == 0
    assert "thresholds" not in meta and meta["name"]  # the base's record is kept, its thresholds are not
    assert json.loads((tmp_path / METADATA_FILE).read_text())["claims"]["config"]["lr"] == CONFIG.lr
    assert file_sha256(tmp_path / DELTA_FILE) != file_sha256(SHIPPED_DIR / DELTA_FILE)
    scores = RelevanceModel(str(tmp_path), embedding_weight=0).score(claims[0].question, [claims[0].text])
    assert 0 <= scores[0] <= 1
