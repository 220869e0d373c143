"""The harness measures correctly: hand-made answers with known outcomes, metric arithmetic, gates, compare."""

import pytest

from citestream.eval.gates import FALLBACK_ALERT, evaluate_gates, gate_lines
from citestream.eval.main import cmd_eval, role_of
from citestream.eval.run_report import EvalReport, SetReport, compare, render, write_json
from citestream.eval.score import ItemResult, breakdown, metrics, score_item
from citestream.eval.sets import GoldenItem, PageRef, contains_phrase, phrase_key
from citestream.models import REFUSAL_TEXT, ValidatedAnswer
from citestream.models.answer import AnswerSentence
from citestream.qa.validate import render_answer

CHUNK = ("FDA recommends that applicants use either three pilot-scale batches or two pilot-scale batches plus one "
         "small-scale batch. At the time of submission, provide 6 months of data that include accelerated and "
         "long-term conditions.")
OTHER_CHUNK = "The CTD is comprised of the following modules: Module 1, Module 2: Summaries, Module 3: Quality."
TEXTS = {"c-stab": CHUNK, "c-ctd": OTHER_CHUNK}

ANSWERABLE = GoldenItem(id="a1", question="How many months of stability data at submission?", answerable=True,
                        scope="FDA", category="number",
                        expected=[PageRef(pdf="stab.pdf", page=5)], must_contain_any=["provide 6 months of data"])
UNANSWERABLE = GoldenItem(id="u1", question="Boiling point of nitrogen?", answerable=False, scope="MIXED",
                          category="out_of_domain", absent_terms=["nitrogen"])


def answer(sentences=(), *, refused=False, fallback=False, text=None) -> ValidatedAnswer:
    rows = [AnswerSentence(n=i, text=t, pdf=pdf, page=page, chunk_id=cid, anchor=f"C{i - 1}")
            for i, (t, pdf, page, cid) in enumerate(sentences, start=1)]
    if refused:
        return ValidatedAnswer(request_id="r", policy_version="p", question="q", scope="MIXED", status="refused",
                               answer_text=text or REFUSAL_TEXT, classification="REFUSAL",
                               generation_status="OK", validation_status="PASSED", fallback_used=fallback)
    return ValidatedAnswer(request_id="r", policy_version="p", question="q", scope="MIXED", status="answered",
                           answer_text=text or render_answer(rows, "High"), sentences=rows, confidence="High",
                           classification="DEFINITIVE", generation_status="OK", validation_status="PASSED",
                           fallback_used=fallback)


GOOD = ("At the time of submission, provide 6 months of data that include accelerated and long-term conditions.",
        "stab.pdf", 5, "c-stab")


def test_grounded_answer_on_the_expected_page_passes():
    r = score_item(ANSWERABLE, answer([GOOD]), TEXTS)
    assert (r.outcome, r.passed, r.hallucinated) == ("pass", True, False)
    assert r.matched_phrase == "provide 6 months of data" and r.citations_on_expected == 1


def test_the_phrase_must_be_in_the_answer_not_only_in_the_cited_chunk():
    """A verbatim neighbour of the fact is grounded, not an answer (qa-v2 scoring)."""
    short = ("Provide 6 months of data.", "stab.pdf", 5, "c-stab")
    item = ANSWERABLE.model_copy(update={"must_contain_any": ["three pilot-scale batches"]})
    assert score_item(item, answer([short]), TEXTS).outcome == "missing_phrase"


def test_every_group_of_a_multi_fact_item_must_be_stated():
    item = ANSWERABLE.model_copy(update={"category": "multi_fact",
                                         "must_contain_all": [["provide 6 months of data"], ["pilot-scale batches"]]})
    assert score_item(item, answer([GOOD]), TEXTS).outcome == "missing_phrase"
    both = (CHUNK, "stab.pdf", 5, "c-stab")
    assert score_item(item, answer([both]), TEXTS).outcome == "pass"


def test_answer_citing_a_page_not_expected_is_miscited():
    r = score_item(ANSWERABLE, answer([(GOOD[0], "stab.pdf", 4, "c-stab")]), TEXTS)
    assert (r.outcome, r.passed, r.citations_on_expected) == ("miscited", False, 0)


def test_answer_without_any_required_phrase_fails():
    r = score_item(ANSWERABLE, answer([("The CTD is comprised of the following modules.", "stab.pdf", 5, "c-ctd")]),
                   TEXTS)
    assert r.outcome == "missing_phrase" and not r.passed


def test_unsupported_sentence_is_hallucinated():
    invented = ("At the time of submission, provide 12 months of data that include accelerated conditions.",
                "stab.pdf", 5, "c-stab")
    r = score_item(ANSWERABLE, answer([GOOD, invented]), TEXTS)
    assert r.hallucinated and r.hallucinated_sentences == [invented[0]]


def test_sentence_citing_the_wrong_chunk_or_a_missing_chunk_is_hallucinated():
    wrong_chunk = (GOOD[0], "stab.pdf", 5, "c-ctd")
    missing = (GOOD[0], "stab.pdf", 5, "c-gone")
    assert score_item(ANSWERABLE, answer([wrong_chunk]), TEXTS).hallucinated
    assert score_item(ANSWERABLE, answer([missing]), TEXTS).hallucinated


def test_refusing_an_answerable_item_is_an_incorrect_refusal():
    r = score_item(ANSWERABLE, answer(refused=True), TEXTS)
    assert (r.outcome, r.passed, r.status) == ("incorrect_refusal", False, "refused")


def test_exact_refusal_of_an_unanswerable_item_passes():
    r = score_item(UNANSWERABLE, answer(refused=True), TEXTS)
    assert (r.outcome, r.passed) == ("correct_refusal", True)


def test_anything_but_the_exact_refusal_fails_an_unanswerable_item():
    assert score_item(UNANSWERABLE, answer([GOOD]), TEXTS).outcome == "answered_unanswerable"
    near = score_item(UNANSWERABLE, answer(refused=True, text=REFUSAL_TEXT + "."), TEXTS)
    assert (near.outcome, near.passed) == ("not_exact_refusal", False)


def test_no_reply_is_a_failure():
    r = score_item(ANSWERABLE, None, TEXTS)
    assert (r.outcome, r.passed, r.status) == ("no_reply", False, "no_reply")


def test_phrase_matching_ignores_spacing_case_and_hyphenation():
    assert phrase_key("Sustained-\nrelease") == phrase_key("sustained\ufffe release") == "sustainedrelease"
    assert contains_phrase("three   pilot\nscale Batches", ["x", "Three pilot-scale batches"]) == \
        "Three pilot-scale batches"
    assert contains_phrase("nothing here", ["three pilot-scale batches"]) is None


def _result(id, answerable=True, outcome="pass", status="answered", cited=(), on_expected=0, hallucinated=(),
            fallback=False, category="fact"):
    return ItemResult(id=id, category=category, answerable=answerable, question="q", outcome=outcome,
                      passed=outcome in ("pass", "correct_refusal"), status=status, cited=list(cited),
                      citations_on_expected=on_expected, hallucinated_sentences=list(hallucinated),
                      fallback_used=fallback)


def test_metric_arithmetic():
    results = [
        _result("a", cited=["x p1", "x p2"], on_expected=1, fallback=True),
        _result("b", cited=["x p1"], on_expected=1, hallucinated=["made up"]),
        _result("c", outcome="incorrect_refusal", status="refused"),
        _result("d", outcome="miscited", cited=["y p9"]),
        _result("u", answerable=False, outcome="correct_refusal", status="refused", category="near_miss"),
        _result("v", answerable=False, outcome="answered_unanswerable", cited=["z p1"], fallback=True,
                category="near_miss"),
    ]
    m = metrics(results)
    assert (m["items"], m["answerable"], m["unanswerable"], m["passed"]) == (6, 4, 2, 3)
    assert m["pass_rate"] == 0.5
    assert m["incorrect_refusal"] == 0.25 and m["incorrect_refusal_count"] == 1
    assert m["correct_refusal"] == 0.5
    assert m["hallucination"] == 0.25  # 1 of 4 answered items
    assert m["citation_precision"] == 0.5  # 2 of the 4 citations of answered answerable items
    assert m["phase_a_fallback_used_count"] == 2
    assert m["phase_a_fallback_used_rate"] == 0.3333
    assert m["fallback_used_rate_answerable"] == 0.25
    assert breakdown(results, "category") == {"fact": {"items": 4, "passed": 2, "pass_rate": 0.5},
                                              "near_miss": {"items": 2, "passed": 1, "pass_rate": 0.5}}


GOOD_METRICS = {"pass_rate": 0.97, "hallucination": 0.0, "fallback_used_rate_answerable": 0.1,
                "incorrect_refusal": 0.0}


def test_gates_pass_at_the_contract_thresholds():
    at_edge = {"baseline": {**GOOD_METRICS, "pass_rate": 0.95, "fallback_used_rate_answerable": 0.15,
                            "incorrect_refusal": 0.02},
               "perturb": {**GOOD_METRICS, "pass_rate": 0.90}}
    results = evaluate_gates({name: (name, m) for name, m in at_edge.items()})
    assert len(results) == 8 and all(g.passed for g in results)


def test_qa_v2_gates_are_the_issue_targets():
    edge = {"answerable_pass_rate": 0.80, "correct_refusal": 0.92, "incorrect_refusal": 0.08,
            "citation_precision": 0.85, "hallucination": 0.0}
    assert all(g.passed for g in evaluate_gates({"qa_v2_test": ("qa-v2", edge)}))
    failed = evaluate_gates({"qa_v2_dev": ("qa-v2", {**edge, "correct_refusal": 0.91})})
    assert [(g.role, g.metric) for g in failed if not g.passed] == [("qa_v2_dev", "correct_refusal")]


@pytest.mark.parametrize("role, metric, value", [
    ("baseline", "pass_rate", 0.9499), ("perturb", "pass_rate", 0.8999), ("baseline", "hallucination", 0.01),
    ("perturb", "hallucination", 0.0125), ("baseline", "incorrect_refusal", 0.0201),
    ("perturb", "incorrect_refusal", 0.05), ("baseline", "fallback_used_rate_answerable", 0.1501),
])
def test_each_gate_breaches_just_past_its_threshold(role, metric, value):
    by_role = {"baseline": dict(GOOD_METRICS), "perturb": {**GOOD_METRICS, "pass_rate": 0.92}}
    by_role[role][metric] = value
    failed = [g for g in evaluate_gates({name: (name, m) for name, m in by_role.items()}) if not g.passed]
    assert [(g.role, g.metric) for g in failed] == [(role, metric)]


def test_fallback_breach_prints_the_exact_contract_alert():
    assert FALLBACK_ALERT == ("Fallback retrieval triggered too often; check embeddings/index changes or "
                              "similarity calibration.")
    lines = gate_lines(evaluate_gates({"baseline": ("baseline",
                                                    {**GOOD_METRICS, "fallback_used_rate_answerable": 0.2})}))
    assert lines[lines.index("[FAIL] baseline fallback_used_rate_answerable = 0.2000 (gate <= 0.15)") + 1] == \
        FALLBACK_ALERT
    ok = gate_lines(evaluate_gates({"baseline": ("baseline", GOOD_METRICS)}))
    assert FALLBACK_ALERT not in ok


def test_role_of_a_set():
    assert role_of([ANSWERABLE]) == "baseline"
    assert role_of([ANSWERABLE.model_copy(update={"perturbation": "typos", "source_id": "a1"})]) == "perturb"
    assert role_of([ANSWERABLE.model_copy(update={"kind": "reworded", "perturbation": "typos"})]) == "qa-v2"


def _report(results, through="inprocess"):
    s = SetReport(name="golden_set", role="baseline", metrics=metrics(results),
                  per_category=breakdown(results, "category"), items=results)
    return EvalReport(through=through, sets={"golden_set": s},
                      gates=evaluate_gates({"golden_set": ("baseline", s.metrics)}))


def test_report_round_trip_table_and_compare(tmp_path, capsys):
    old = _report([_result("a"), _result("b", outcome="incorrect_refusal", status="refused")])
    new = _report([_result("a"), _result("b")])
    text = render(old)
    assert "pass_rate" in text and "incorrect_refusal" in text and "[FAIL] golden_set pass_rate" in text
    old_path, new_path = write_json(old, tmp_path / "old.json"), write_json(new, tmp_path / "new.json")

    diff = compare(old, new)
    assert "pass_rate" in diff and "0.5000" in diff and "1.0000" in diff and "+0.5" in diff
    assert "incorrect_refusal" in diff and "-0.5" in diff
    assert "changed b: incorrect_refusal -> pass" in diff
    assert "right: 1 gained, 0 lost (sign test p 1.00)" in diff

    class Args:
        compare = [str(old_path), str(new_path)]

    assert cmd_eval(Args()) == 0
    assert capsys.readouterr().out == diff


def test_a_held_out_test_split_is_never_listed_item_by_item():
    results = [_result("a"), _result("b", outcome="incorrect_refusal", status="refused")]
    s = SetReport(name="qa_v2_test", role="qa-v2", metrics=metrics(results),
                  per_category=breakdown(results, "category"), items=results)
    report = EvalReport(through="inprocess", sets={"qa_v2_test": s})
    text = render(report)
    assert "not listed" in text and f"  {'b':<6}incorrect_refusal" not in text
    better = EvalReport(through="inprocess", sets={"qa_v2_test": s.model_copy(update={"items": [
        _result("a"), _result("b")]})})
    diff = compare(report, better)
    assert "changed b" not in diff and "1 items changed outcome" in diff
    assert "right: 1 gained, 0 lost" in diff  # counts only, never which


def test_a_dev_gain_is_weighed_by_the_items_that_moved_each_way():
    """Two trainings of one judge differed by 10 items gained against 7 lost on dev: no evidence of a lever."""
    from citestream.eval.misses import against
    from citestream.eval.run_report import changed_items, sign_test

    assert sign_test(0, 0) == 1.0 and sign_test(3, 0) == 0.25
    assert round(sign_test(10, 7), 2) == 0.63 and sign_test(7, 10) == sign_test(10, 7)
    assert sign_test(20, 8) < 0.05
    assert changed_items({"a": True, "b": False, "c": True}, {"a": False, "b": True, "c": True, "d": True}) == (1, 1)
    before = [{"set": "s", "id": "a", "outcome": "pass"}, {"set": "s", "id": "b", "outcome": "incorrect_refusal"},
              {"set": "s", "id": "c", "outcome": "correct_refusal"}]
    after = [{"set": "s", "id": "a", "outcome": "miscited"}, {"set": "s", "id": "b", "outcome": "pass"},
             {"set": "s", "id": "c", "outcome": "correct_refusal"}]
    assert against(before, after) == ("against the earlier run: 2 right of 3 (was 2); 1 gained, 1 lost, "
                                      "sign test p 1.00")


def test_plot_writes_a_png(tmp_path):
    from citestream.eval.plot import plot_set

    report = _report([_result("a"), _result("u", answerable=False, outcome="correct_refusal", status="refused",
                                            category="near_miss")])
    path = plot_set(report.sets["golden_set"], tmp_path / "p.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_score_set_scores_every_item_and_fetches_cited_chunks(monkeypatch):
    import citestream.eval.main as main

    asked = []
    monkeypatch.setattr(main, "fetch_chunk_texts", lambda engine, ids: asked.extend(ids) or TEXTS)
    s = main.score_set("golden_set", [ANSWERABLE, UNANSWERABLE], {"a1": (answer([GOOD]), 0.4)}, engine=None)
    assert [r.outcome for r in s.items] == ["pass", "no_reply"] and asked == ["c-stab"]
    assert s.role == "baseline" and s.items[0].latency_s == 0.4 and s.metrics["no_reply_count"] == 1
