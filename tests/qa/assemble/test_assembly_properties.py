"""Property-based tests (hypothesis) for the R2.2 selection invariants and safe_normalize_v1."""

from __future__ import annotations

import unicodedata
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citestream.qa.assemble import assemble_bundle, make_trace, overlap_ratio, sanitize
from citestream.embedding import get_token_counter
from citestream.core.policy import DEFAULT_POLICY
from citestream.qa.assemble.prompt import check_structure

COUNT = get_token_counter().count
SP = DEFAULT_POLICY.selection
TRACE = make_trace(DEFAULT_POLICY, "idx-prop", 8, "wordpiece", "all-MiniLM-L6-v2")
VOCAB = ["apixaban", "stroke", "risk", "reduces", "by", "70%", "the", "trial", "warfarin", "bleeding", "dose",
         "mg", "study", "report", "within", "90", "days", "sponsor", "must", "submit", ".", "\x00", "\n", "\t"]
PROPS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

texts = st.one_of(
    st.lists(st.sampled_from(VOCAB), min_size=0, max_size=60).map(" ".join),
    st.lists(st.sampled_from(VOCAB[:12]), min_size=200, max_size=900).map(" ".join),  # over the per-chunk cap
    st.text(max_size=80),
)


@st.composite
def bundles(draw):
    n = draw(st.integers(0, 12))
    ids = draw(st.lists(st.from_regex(r"[a-z]{1,3}-[0-9]{1,3}", fullmatch=True), min_size=n, max_size=n,
                        unique=True))
    ranks = draw(st.permutations(list(range(n))))
    rows = [
        {"chunk_id": cid, "knowledge_id": draw(st.sampled_from(["doc-a", "doc-b", "doc-c", "doc-d"])),
         "chunk_text": draw(texts), "rank": rank, "similarity_score": draw(st.floats(0, 1)),
         "pdf": "x.pdf", "page": draw(st.integers(1, 50))}
        for cid, rank in zip(ids, ranks)
    ]
    return rows


def run(rows):
    return assemble_bundle("prop", rows, "How much does apixaban reduce stroke risk?", DEFAULT_POLICY, COUNT, TRACE,
                           empty_means_no_evidence=True)


@PROPS
@given(bundles(), st.randoms(use_true_random=False))
def test_selection_invariants(rows, rnd):
    bundle, prompt = run(rows)
    selected = bundle.selected_evidence
    by_id = {r["chunk_id"]: r for r in rows}

    # every input chunk is accounted for exactly once: selected or dropped with a code
    dropped = [d.chunk_id for d in bundle.assembly_metrics.drops]
    assert sorted(dropped + [e.chunk_id for e in selected]) == sorted(by_id)

    # status follows the evidence
    assert (bundle.assembly_status == "NO_EVIDENCE") == (not selected)
    assert bundle.assembly_status in {"OK", "NO_EVIDENCE"}
    assert (prompt.prompt_text == "") == (not selected)

    # caps, floor, order, anchors
    assert len(selected) <= SP.max_chunks
    assert max(Counter(e.knowledge_id for e in selected).values(), default=0) <= SP.max_chunks_per_knowledge_id
    assert all(e.similarity_score >= SP.min_similarity for e in selected)
    keys = [(e.rank, e.chunk_id) for e in selected]
    assert keys == sorted(keys)
    assert [e.citation_anchor for e in selected] == [f"C{i}" for i in range(len(selected))]
    assert bundle.anchor_map == {e.citation_anchor: e.chunk_id for e in selected}

    # no near-duplicates survive; text is sanitized, never reworded (a prefix of the sanitized original)
    for i, a in enumerate(selected):
        full = sanitize(by_id[a.chunk_id]["chunk_text"])
        assert a.sanitized_text and full.startswith(a.sanitized_text)
        assert a.truncated == (a.sanitized_text != full)
        assert COUNT(a.sanitized_text) <= SP.chunk_token_cap
        for b in selected[i + 1:]:
            assert overlap_ratio(a.sanitized_text, b.sanitized_text) < SP.overlap_ratio_threshold

    # budgets
    if selected:
        assert COUNT(bundle.evidence_block_text) <= SP.max_evidence_tokens
        assert prompt.tokens.total_prompt_tokens <= SP.max_total_prompt_tokens
        assert check_structure(prompt.prompt_text, bundle.evidence_block_text,
                               "How much does apixaban reduce stroke risk?") is None

    # metrics agree with the drop list
    codes = Counter(d.code for d in bundle.assembly_metrics.drops)
    m = bundle.assembly_metrics
    assert (m.dedup_dropped_count, m.budget_dropped_count, m.per_knowledge_cap_dropped_count,
            m.empty_dropped_count, m.below_floor_dropped_count) == (
        codes["DROP_DUP"], codes["DROP_BUDGET"], codes["DROP_PER_KNOWLEDGE_CAP"],
        codes["DROP_EMPTY_AFTER_SANITIZE"], codes["DROP_BELOW_SIMILARITY_FLOOR"])
    assert m.drop_reason_codes == sorted(codes) and m.selected_k == len(selected) and m.retrieved_k == len(rows)

    # the best-ranked eligible chunk is never dropped (the top document keeps its best chunk)
    eligible = [r for r in sorted(rows, key=lambda r: (r["rank"], r["chunk_id"]))
                if sanitize(r["chunk_text"]) and not sanitize(r["chunk_text"]).startswith(("###", "[C"))
                and r["similarity_score"] >= SP.min_similarity]
    if eligible:
        assert selected and selected[0].chunk_id == eligible[0]["chunk_id"]

    # deterministic whatever the input order
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    again_bundle, again = run(shuffled)
    assert again.prompt_text.encode() == prompt.prompt_text.encode()
    assert again_bundle.model_dump() == bundle.model_dump()


@PROPS
@given(st.text())
def test_sanitize_is_single_line_idempotent_and_control_free(text):
    clean = sanitize(text)
    assert sanitize(clean) == clean
    assert clean == " ".join(clean.split())
    assert "\n" not in clean and "\x00" not in clean
    assert not any(unicodedata.category(c) in {"Cc", "Cf", "Cs", "Zl", "Zp"} for c in clean)
    clean.encode("utf-8")  # always encodable: the prompt bytes can be hashed


@PROPS
@given(st.lists(st.text(), min_size=1, max_size=4))
def test_the_token_count_of_lines_is_the_sum_of_theirs(lines):
    """The counter sums a text's lines, each line's count remembered (assembly counts the growing evidence block
    for every chunk it adds): exact only if no token spans a line break. Checked against the tokenizer reading the
    whole text at once."""
    counter = get_token_counter()
    whole = "\n".join(lines)
    assert counter.count(whole) == len(counter._tokenizer.encode(whole, add_special_tokens=False).ids)
    assert counter.count(whole) == sum(counter.count(line) for line in lines)
