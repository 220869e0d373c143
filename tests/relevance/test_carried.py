"""A question's sentence scores carried between stages (``relevance.carried``, ``models.SentenceScores``)."""

import pytest
from pydantic import ValidationError

from citestream.models.common import SentenceScores, reading_key
from citestream.relevance.carried import Carried, active, carrying, carrying_record


def scores(model="m", asked="How long?", **by_text):
    return SentenceScores(model=model, asked=asked, scores={reading_key(t): s for t, s in by_text.items()})


def test_a_stage_reads_the_carried_score_and_keeps_what_it_hands_out():
    with carrying_record(scores(a=0.7)) as carried:
        assert active("m", "How long?") is carried
        assert carried.get("a") == 0.7 and carried.get("b") is None
        carried.keep("b", 0.2)
        assert carried.record().scores == {reading_key("a"): 0.7, reading_key("b"): 0.2}
    assert active("m", "How long?") is None


def test_scores_of_another_model_or_another_reading_are_not_used():
    assert Carried("other", "How long?", scores(a=0.7)).get("a") is None
    assert Carried("m", "How often?", scores(a=0.7)).get("a") is None
    with carrying("m", "How long?"):
        assert active("other", "How long?") is None and active("m", "How often?") is None


def test_retrieve_carries_only_the_readings_it_names():
    carried = Carried("m", "q")
    for text, s in (("fact sentence", 0.9), ("pool sentence", 0.4)):
        carried.keep(text, s)
    assert carried.record(["fact sentence", "never scored"]).scores == {reading_key("fact sentence"): 0.9}


def test_no_record_scores_means_no_carry():
    with carrying_record(None) as carried:
        assert carried is None


@pytest.mark.parametrize("bad", [{"not-a-key": 0.5}, {reading_key("a"): 1.5}, {reading_key("a"): -0.1}])
def test_a_carried_score_is_a_probability_under_a_reading_key(bad):
    with pytest.raises(ValidationError):
        SentenceScores(model="m", asked="q", scores=bad)


def test_a_record_carries_a_bounded_number_of_scores_and_none_past_it():
    from citestream.models.limits import MAX_CARRIED_SCORES

    too_many = {reading_key(str(i)): 0.5 for i in range(MAX_CARRIED_SCORES + 1)}
    with pytest.raises(ValidationError):
        SentenceScores(model="m", asked="q", scores=too_many)
    carried = Carried("m", "q")
    for i in range(MAX_CARRIED_SCORES + 1):
        carried.keep(str(i), 0.5)
    assert carried.record() is None
