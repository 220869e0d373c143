"""The golden sets are checked against the PDFs themselves, page by page (no servers, no chunker)."""

import json

import pytest

from citestream.eval.page_text import CORPUS_DIR, corpus_pdfs, page_texts
from citestream.eval.sets import (
    BASELINE_SET, PERTURB_SET, UNANSWERABLE_CATEGORIES, contains_phrase, load_set, word_key,
)

BASELINE = load_set(BASELINE_SET)
PERTURB = load_set(PERTURB_SET)
MANIFEST = {row["file"]: row for row in json.loads((CORPUS_DIR / "manifest.json").read_text())}
needs_corpus = pytest.mark.skipif(not CORPUS_DIR.is_dir(), reason="../shared/corpus is not present")


@pytest.fixture(scope="module")
def corpus_words():
    """word_key of every page of every corpus PDF."""
    return [f" {word_key(text)} " for pdf in corpus_pdfs() for text in page_texts(pdf)]


def test_sizes_and_mix():
    assert len(BASELINE) >= 60 and len(PERTURB) >= 40
    unanswerable = [i for i in BASELINE if not i.answerable]
    assert len(unanswerable) / len(BASELINE) >= 0.20
    assert {i.category for i in unanswerable} == UNANSWERABLE_CATEGORIES
    assert all((i.category in UNANSWERABLE_CATEGORIES) == (not i.answerable) for i in BASELINE + PERTURB)
    assert {i.perturbation for i in PERTURB} >= {"paraphrase", "typos", "casing_punctuation", "acronym_expansion",
                                                 "verbose_preamble", "negated_context", "targeted_expansion"}
    assert len({ref.pdf for i in BASELINE for ref in i.expected}) >= 15


def test_answerable_items_are_complete():
    for item in BASELINE + PERTURB:
        if item.answerable:
            assert item.expected and item.must_contain_any, item.id
        else:
            assert not item.expected and not item.must_contain_any and item.absent_terms, item.id


def test_perturbations_keep_their_source_expectations():
    by_id = {i.id: i for i in BASELINE}
    for p in PERTURB:
        source = by_id[p.source_id]
        assert p.perturbation and p.question != source.question, p.id
        assert (p.answerable, p.expected, p.must_contain_any, p.scope) == (
            source.answerable, source.expected, source.must_contain_any, source.scope), p.id


def test_continuous_processing_case_is_answerable_on_a_real_page():
    cases = [p for p in PERTURB if p.perturbation == "targeted_expansion"]
    assert cases and all("continuous processing" in p.question.lower() and p.answerable for p in cases)


@needs_corpus
def test_scopes_match_the_manifest_authority():
    for item in BASELINE:
        authorities = {MANIFEST[ref.pdf]["authority"] for ref in item.expected}
        if item.answerable:
            assert item.scope == "MIXED" or authorities == {item.scope}, item.id
        if item.category == "wrong_authority":
            assert item.scope not in {row["authority"] for row in MANIFEST.values()}, item.id


@needs_corpus
@pytest.mark.parametrize("item", [i for i in BASELINE if i.answerable], ids=lambda i: i.id)
def test_expected_pages_state_the_answer(item):
    """Each expected page exists and holds at least one must_contain_any phrase (whitespace/hyphenation-normalised)."""
    for ref in item.expected:
        pages = page_texts(CORPUS_DIR / ref.pdf)
        assert 1 <= ref.page <= len(pages) == MANIFEST[ref.pdf]["pages"], (item.id, ref)
        assert contains_phrase(pages[ref.page - 1], item.must_contain_any), (item.id, ref, item.must_contain_any)


@needs_corpus
@pytest.mark.parametrize("item", [i for i in BASELINE if not i.answerable], ids=lambda i: i.id)
def test_unanswerable_key_terms_are_nowhere_in_the_corpus(item, corpus_words):
    for term in item.absent_terms:
        if word_key(term):
            assert not any(f" {word_key(term)} " in page for page in corpus_words), (item.id, term)
        else:  # a bare symbol such as "$"
            assert not any(term in text for pdf in corpus_pdfs() for text in page_texts(pdf)), (item.id, term)
