"""Structural checks of the held-out v2 sets (qa-v2 and claims-v2), against the PDFs themselves (no servers).

These check the set, never the system: sizes and mix, that every expected page exists and states the
answer, that unanswerable key terms occur on no corpus page, and that the dev/test split is the one
scripts/split_eval_set.py reproduces from the committed files.
"""

import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from citestream.config import PROJECT_ROOT
from citestream.eval.page_text import CORPUS_DIR, corpus_pdfs, page_texts
from citestream.eval.sets import GOLDEN_DIR, UNANSWERABLE_CATEGORIES, contains_phrase, load_set, phrase_key, word_key

QA_DEV, QA_TEST = GOLDEN_DIR / "qa_v2_dev.jsonl", GOLDEN_DIR / "qa_v2_test.jsonl"
CLAIMS_DEV, CLAIMS_TEST = GOLDEN_DIR / "claims_v2_dev.jsonl", GOLDEN_DIR / "claims_v2_test.jsonl"

DEV, TEST = load_set(QA_DEV), load_set(QA_TEST)
ALL = DEV + TEST
ANSWERABLE = [i for i in ALL if i.answerable]
UNANSWERABLE = [i for i in ALL if not i.answerable]
CLAIMS = [json.loads(line) for path in (CLAIMS_DEV, CLAIMS_TEST) for line in path.read_text().splitlines()
          if line.strip()]
LABELS = {"supported", "contradicted", "absent"}

MANIFEST_PATH = CORPUS_DIR / "manifest.json"
MANIFEST = {row["file"]: row for row in json.loads(MANIFEST_PATH.read_text())} if MANIFEST_PATH.exists() else {}
needs_corpus = pytest.mark.skipif(not CORPUS_DIR.is_dir(), reason="../shared/corpus is not present")

MIN_CATEGORIES = {"number": 15, "time_limit": 12, "yes_no": 12, "definition": 10, "list": 8, "multi_fact": 12,
                  "exclusion": 5}
MIN_PER_KIND = 13


def groups(item):
    """The phrase groups an answer must satisfy (one phrase from each)."""
    return item.must_contain_all or [item.must_contain_any]


@pytest.fixture(scope="module")
def corpus_words():
    """word_key of every page of every corpus PDF."""
    return [f" {word_key(text)} " for pdf in corpus_pdfs() for text in page_texts(pdf)]


# ---------------------------------------------------------------------------------------------- qa-v2: mix

def test_sizes_and_unanswerable_mix():
    assert len(ALL) >= 170
    assert len(UNANSWERABLE) / len(ALL) >= 0.32
    kinds = Counter(i.category for i in UNANSWERABLE)
    assert set(kinds) == UNANSWERABLE_CATEGORIES
    assert all(kinds[k] >= MIN_PER_KIND for k in UNANSWERABLE_CATEGORIES), kinds
    assert all((i.category in UNANSWERABLE_CATEGORIES) == (not i.answerable) for i in ALL)


def test_reworded_share_and_perturbations():
    reworded = [i for i in ALL if i.kind == "reworded"]
    assert len(reworded) / len(ALL) >= 0.32
    assert all(i.kind in {"direct", "reworded"} for i in ALL)
    for item in ALL:
        assert (item.perturbation is not None) == (item.kind == "reworded"), item.id
    assert {i.perturbation for i in reworded} >= {"typos", "synonyms", "acronym_expansion", "acronym_contraction",
                                                  "paraphrase", "verbose_preamble", "casing_punctuation"}


def test_answerable_categories():
    counts = Counter(i.category for i in ANSWERABLE)
    for category, minimum in MIN_CATEGORIES.items():
        assert counts[category] >= minimum, (category, counts[category])
    assert counts["fact"] > 0


def test_scoped_items():
    scoped = [i for i in ANSWERABLE if i.scope in {"FDA", "ICH"}]
    assert len(scoped) >= 15
    assert all(i.scope in {"MIXED", "FDA", "ICH"} for i in ANSWERABLE)


@needs_corpus
def test_every_pdf_is_covered_by_four_answerable_items():
    per_pdf = Counter(pdf for i in ANSWERABLE for pdf in {ref.pdf for ref in i.expected})
    assert set(per_pdf) == {p.name for p in corpus_pdfs()} == set(MANIFEST)
    assert min(per_pdf.values()) >= 4, per_pdf


def test_ids_and_families():
    ids = [i.id for i in ALL]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"v2-\d{3}", i) for i in ids)
    for split in (DEV, TEST):
        split_ids = {i.id for i in split}
        assert [i.id for i in split] == sorted(split_ids)
        for item in split:
            if item.source_id:  # a rewording travels with the item it rewords
                assert item.source_id in split_ids, item.id
                assert item.kind == "reworded", item.id
    for split in (DEV, TEST):
        assert any(i.answerable for i in split) and any(not i.answerable for i in split)


def test_items_are_complete():
    for item in ALL:
        if item.answerable:
            assert item.expected and item.must_contain_any, item.id
            assert not item.absent_terms and not item.related, item.id
            if item.category == "multi_fact":
                assert len(item.must_contain_all) >= 2, item.id
                assert item.must_contain_any == item.must_contain_all[0], item.id
            else:
                assert not item.must_contain_all, item.id
            assert all(phrase_key(p) for g in groups(item) for p in g), item.id
        else:
            assert not item.expected and not item.must_contain_any and not item.must_contain_all, item.id
            if item.category == "out_of_domain":
                assert item.absent_terms, item.id
            if item.category == "near_miss":
                assert item.related, item.id
            else:
                assert not item.related, item.id
            if item.category == "wrong_authority":
                assert item.scope not in {"FDA", "ICH"}, item.id


# ---------------------------------------------------------------------------------------------- qa-v2: pages

@needs_corpus
@pytest.mark.parametrize("item", ANSWERABLE, ids=lambda i: i.id)
def test_expected_pages_state_the_answer(item):
    """Each expected page exists and holds a phrase; each phrase group has a phrase on some expected page."""
    texts = {}
    for ref in item.expected:
        pages = page_texts(CORPUS_DIR / ref.pdf)
        assert len(pages) == MANIFEST[ref.pdf]["pages"] and 1 <= ref.page <= len(pages), (item.id, ref)
        texts[(ref.pdf, ref.page)] = pages[ref.page - 1]
    every_phrase = [p for g in groups(item) for p in g]
    for key, text in texts.items():
        assert contains_phrase(text, every_phrase), (item.id, key)
    for group in groups(item):
        assert any(contains_phrase(text, group) for text in texts.values()), (item.id, group)


@needs_corpus
@pytest.mark.parametrize("item", [i for i in ANSWERABLE if i.scope != "MIXED"], ids=lambda i: i.id)
def test_scoped_items_match_the_manifest_authority(item):
    assert {MANIFEST[ref.pdf]["authority"] for ref in item.expected} == {item.scope}, item.id


@needs_corpus
@pytest.mark.parametrize("item", UNANSWERABLE, ids=lambda i: i.id)
def test_unanswerable_key_terms_are_nowhere_in_the_corpus(item, corpus_words):
    for term in item.absent_terms:
        if word_key(term):
            assert not any(f" {word_key(term)} " in page for page in corpus_words), (item.id, term)
        else:  # a bare symbol
            assert not any(term in text for pdf in corpus_pdfs() for text in page_texts(pdf)), (item.id, term)


@needs_corpus
@pytest.mark.parametrize("item", [i for i in UNANSWERABLE if i.category == "near_miss"], ids=lambda i: i.id)
def test_near_miss_related_pages_exist(item):
    for ref in item.related:
        assert ref.pdf in MANIFEST and 1 <= ref.page <= MANIFEST[ref.pdf]["pages"], (item.id, ref)
        assert page_texts(CORPUS_DIR / ref.pdf)[ref.page - 1].strip(), (item.id, ref)


# ---------------------------------------------------------------------------------------------- claims-v2

def test_claims_mix_and_fields():
    ids = [c["id"] for c in CLAIMS]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"cv2-\d{3}", i) for i in ids)
    assert all(set(c) == {"id", "claim", "label", "pdf", "page", "source_text"} for c in CLAIMS)
    labels = Counter(c["label"] for c in CLAIMS)
    assert set(labels) <= LABELS
    assert len(CLAIMS) >= 52
    assert labels["supported"] >= 26
    assert labels["contradicted"] + labels["absent"] >= 26
    assert labels["contradicted"] and labels["absent"]
    for claim in CLAIMS:
        assert claim["claim"].strip(), claim["id"]
        if claim["label"] != "absent":
            assert claim["pdf"] and claim["page"] and claim["source_text"], claim["id"]
            # paraphrased, not copied: the claim is not the source sentence itself
            assert phrase_key(claim["claim"]) != phrase_key(claim["source_text"]), claim["id"]


@needs_corpus
@pytest.mark.parametrize("claim", [c for c in CLAIMS if c["label"] != "absent"], ids=lambda c: c["id"])
def test_claim_sources_are_on_their_pages(claim):
    pages = page_texts(CORPUS_DIR / claim["pdf"])
    assert 1 <= claim["page"] <= len(pages), claim["id"]
    assert phrase_key(claim["source_text"]) in phrase_key(pages[claim["page"] - 1]), claim["id"]


# ---------------------------------------------------------------------------------------------- split

@pytest.mark.parametrize("name,dev,test", [("qa_v2", QA_DEV, QA_TEST), ("claims_v2", CLAIMS_DEV, CLAIMS_TEST)])
def test_split_is_reproducible(name, dev, test, tmp_path):
    """Splitting dev + test again (in either order) gives back both committed files byte for byte."""
    for inputs in ((dev, test), (test, dev)):
        out = tmp_path / inputs[0].stem
        subprocess.run([sys.executable, str(PROJECT_ROOT / "scripts" / "split_eval_set.py"), *map(str, inputs),
                        "--name", name, "--out", str(out)], check=True, capture_output=True)
        assert (out / dev.name).read_bytes() == dev.read_bytes()
        assert (out / test.name).read_bytes() == test.read_bytes()


def test_split_halves_are_balanced():
    assert abs(len(DEV) - len(TEST)) <= 2
    for answerable in (True, False):
        d = sum(i.answerable == answerable for i in DEV)
        t = sum(i.answerable == answerable for i in TEST)
        assert abs(d - t) <= 2
    dev_labels = Counter(c["label"] for c in CLAIMS if c["id"] in {
        json.loads(line)["id"] for line in CLAIMS_DEV.read_text().splitlines() if line.strip()})
    all_labels = Counter(c["label"] for c in CLAIMS)
    assert all(abs(2 * dev_labels[label] - all_labels[label]) <= 2 for label in all_labels)


def test_no_combined_file_in_the_repository():
    assert not list(GOLDEN_DIR.glob("qa_v2*full*")) and not list(GOLDEN_DIR.glob("claims_v2*full*"))
    assert {p.name for p in GOLDEN_DIR.glob("*_v2_*.jsonl")} == {
        "qa_v2_dev.jsonl", "qa_v2_test.jsonl", "claims_v2_dev.jsonl", "claims_v2_test.jsonl"}
