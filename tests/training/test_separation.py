"""How a score's separation of answerable from unanswerable questions is read: ROC AUC and the best that any
refusal threshold on it can reach in the issue's target terms."""

from citestream.training.train import auc, threshold_ceiling


def test_a_perfect_separation_reaches_both_targets():
    assert auc([1, 1, 0, 0], [0.9, 0.8, 0.3, 0.2]) == 1.0
    assert threshold_ceiling([0.9, 0.8], [0.3, 0.2], 2, 2) == (1.0, 1.0)


def test_overlapping_scores_cap_what_a_threshold_can_reach():
    answerable = [0.9, 0.8, 0.7, 0.6, 0.4]
    unanswerable = [0.75, 0.5, 0.3, 0.2, 0.1]
    # refusing 92 % of 5 means refusing all 5: the threshold must sit above 0.75, and only 2 of 5 clear it;
    # letting 90 % through means a threshold at 0.4 or below, which refuses only 0.3, 0.2, 0.1
    assert threshold_ceiling(answerable, unanswerable, 5, 5) == (0.4, 0.6)


def test_questions_refused_before_scoring_count_as_refused_and_not_answered():
    # one unanswerable question refused by scope (not scored), one answerable question lost the same way: half
    # refused whatever the threshold, and at most 3 of 4 answered
    assert threshold_ceiling([0.9, 0.8, 0.7], [0.85], 4, 2, refused_target=0.5, answered_target=0.75) == (0.75, 0.5)
    assert threshold_ceiling([0.9, 0.8, 0.7], [0.85], 4, 2) == (0.25, 0.0)  # refusing both leaves only 0.9
