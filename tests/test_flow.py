"""The declared flow: one table the agents are generated from and the in-process path walks."""

import logging

import pytest

from citestream.deps import Deps
from citestream.flow import FLOW, QUESTION_PATH, Step
from citestream.models import DeadLetter, FactsRecord, ValidatedAnswer
from citestream.topics import TopicWiringError


def test_a_question_passes_these_topics_in_this_order():
    topics = [QUESTION_PATH[0].source] + [step.sink for step in QUESTION_PATH]
    assert topics == ["questions", "qa.facts", "qa.relevant", "qa.prompts", "qa.generations", "answers"]
    assert [step.stage for step in QUESTION_PATH] == ["retrieve", "filter", "assemble", "generate", "validate"]


def test_per_topic_behaviour_is_a_flag_on_the_row():
    entry, *_, last = QUESTION_PATH
    assert entry.admits_requests and entry.counts_fallback
    assert last.answers and [s.stage for s in FLOW if s.answers] == ["validate"]
    assert all(step.answers_on_failure and step.state for step in QUESTION_PATH)
    assert not any(step.answers_on_failure or step.state or step.admits_requests
                   for step in FLOW if step not in QUESTION_PATH)


def test_a_step_wired_to_the_wrong_record_model_is_refused():
    def wrong(record: FactsRecord, deps: Deps) -> ValidatedAnswer:  # questions carry QuestionEvent
        raise AssertionError

    with pytest.raises(TopicWiringError):
        Step("bad", "questions", "answers", wrong)


def test_every_row_has_its_agent_on_its_source_topic(settings):
    from citestream.streams.agents import app

    agents = {name.rsplit(".", 1)[-1]: agent for name, agent in app.agents.items() if name.startswith("citestream.")}
    for step in FLOW:
        agent = agents[step.stage]
        assert list(agent.channel.topics) == [settings.topic(step.source)]


def test_a_side_dead_letter_without_a_broker_is_logged_not_dropped(settings, caplog):
    letter = DeadLetter(request_id="side-1", policy_version="p", index_version=None, stage="filter",
                        source_topic="qa.facts", reason_code="LLM_REPLY_INVALID", reason="not JSON",
                        original_key_b64="", original_value_b64="")
    with caplog.at_level(logging.WARNING, logger="citestream.deps"):
        Deps(settings).dead_letter(letter)
    assert "LLM_REPLY_INVALID" in caplog.text and "side-1" in caplog.text
    sent = []
    Deps(settings, publish_dead_letter=sent.append).dead_letter(letter)
    assert sent == [letter]
