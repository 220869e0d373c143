"""How often each confidence label was right, the calibration curve and its PNG, from scored items."""

from citestream.eval.calibration import choose_high, curve, label_table, plot_calibration, wilson_lower
from citestream.eval.score import ItemResult


def item(i: int, passed: bool, confidence: str | None, best: float | None, answerable: bool = True) -> ItemResult:
    answered = confidence is not None
    return ItemResult(id=f"q{i}", category="fact", answerable=answerable, question="?", passed=passed,
                      outcome="pass" if passed else ("miscited" if answered else "incorrect_refusal"),
                      status="answered" if answered else "refused", confidence=confidence, best_relevance=best)


ITEMS = [item(0, True, "High", 0.95), item(1, True, "High", 0.93), item(2, False, "High", 0.92),
         item(3, True, "Medium", 0.6), item(4, False, "Medium", 0.5), item(5, False, None, None),
         item(6, False, "Medium", 0.45, answerable=False)]


def test_each_label_is_scored_by_the_answers_it_was_given_to():
    table = label_table(ITEMS)
    assert (table["High"]["answers"], table["High"]["right"]) == (3, 2)
    assert (table["Medium"]["answers"], table["Medium"]["right"]) == (3, 1)  # an answered unanswerable is wrong
    assert table["High"]["coverage"] == round(2 / 6, 4)  # right and High, of the answerable questions


def test_the_curve_bins_answers_by_score_and_the_threshold_keeps_its_promise():
    bins = {round(lo, 1): (n, share) for lo, _, n, share in curve(ITEMS) if n}
    assert bins[0.9] == (3, 2 / 3) and bins[0.4] == (1, 0.0)
    scored = [(0.95, 0.2, True), (0.93, None, True), (0.92, 0.9, False), (0.6, None, True), (0.5, None, False)]
    assert choose_high(scored, 6, precision=1.0, min_answers=2, z=0) == (0.51, 0.05, 3, 3)  # close runner-up out
    assert choose_high(scored, 6, precision=1.01, min_answers=1, z=0) is None


def test_high_is_chosen_by_the_lower_bound_not_by_the_share_seen():
    assert wilson_lower(41, 45, 0) == 41 / 45 and 0.84 < wilson_lower(41, 45, 1.28) < 0.87
    assert wilson_lower(95, 100, 1.28) > wilson_lower(19, 20, 1.28)  # the same share, more evidence
    lucky = [(0.95, None, True)] * 19 + [(0.95, None, False)]  # 19 of 20: 0.95 seen, 0.85 at one-sided 90 %
    assert choose_high(lucky, 20, min_answers=15, z=0) is not None
    assert choose_high(lucky, 20, min_answers=15) is None


def test_the_calibration_plot_is_a_png(tmp_path):
    path = plot_calibration("dev", ITEMS, tmp_path / "c.png", {"High": 0.91, "Medium": 0.4})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
