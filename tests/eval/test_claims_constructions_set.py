"""Structural checks of the claims constructions dev set, against the PDFs themselves (no servers).

The set checks the claim judge on what false claims are made of: each source sentence has a true restatement and
false twins with their polarity flipped, their actor swapped, a number, unit or restrictor changed. These tests
check the set, never the system: every source sentence is on its page, every twin has its true restatement.
"""

import json
import re
from collections import Counter

import pytest

from citestream.eval.page_text import CORPUS_DIR, page_texts
from citestream.eval.sets import GOLDEN_DIR, phrase_key

SET = GOLDEN_DIR / "claims_constructions_dev.jsonl"
CLAIMS = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
CONSTRUCTIONS = {"paraphrase", "polarity", "actor", "number", "unit", "restrictor"}
needs_corpus = pytest.mark.skipif(not CORPUS_DIR.is_dir(), reason="../shared/corpus is not present")


def test_mix_and_fields():
    ids = [c["id"] for c in CLAIMS]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"cc-\d{3}", i) for i in ids)
    assert 40 <= len(CLAIMS) <= 80
    assert all(set(c) == {"id", "claim", "label", "construction", "pdf", "page", "source_text"} for c in CLAIMS)
    kinds = Counter(c["construction"] for c in CLAIMS)
    assert set(kinds) == CONSTRUCTIONS and all(kinds[k] >= 2 for k in CONSTRUCTIONS), kinds
    for claim in CLAIMS:
        assert (claim["label"] == "supported") == (claim["construction"] == "paraphrase"), claim["id"]
        assert claim["label"] in {"supported", "contradicted"}, claim["id"]
        assert phrase_key(claim["claim"]) != phrase_key(claim["source_text"]), claim["id"]


def test_every_false_twin_has_a_true_restatement_of_its_sentence():
    restated = {(c["pdf"], c["source_text"]) for c in CLAIMS if c["label"] == "supported"}
    assert all((c["pdf"], c["source_text"]) in restated for c in CLAIMS if c["label"] == "contradicted")


@needs_corpus
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_sources_are_on_their_pages(claim):
    pages = page_texts(CORPUS_DIR / claim["pdf"])
    assert 1 <= claim["page"] <= len(pages), claim["id"]
    assert phrase_key(claim["source_text"]) in phrase_key(pages[claim["page"] - 1]), claim["id"]
