"""A request's progress as the tracker keeps it: the first time each state was reached, and an outcome that no later
stage overwrites (the upsert is built once, so these hold for every mark, not only the first)."""

from __future__ import annotations

import uuid

from citestream.store.requests import RequestTracker


def test_marks_keep_first_arrivals_and_a_terminal_outcome(engine):
    tracker = RequestTracker(engine)
    rid = f"tracker-{uuid.uuid4().hex[:10]}"
    tracker.mark(rid, "received", question="How long is a batch record kept?", scope="FDA")
    first = tracker.get(rid)["history"]["received"]
    tracker.mark(rid, "received", question="another question", scope="EMA")  # a redelivery
    tracker.mark(rid, "retrieved")
    tracker.mark(rid, "answered", detail="cited")
    tracker.mark(rid, "failed", detail="a late failure")  # after the outcome: ignored

    row = tracker.get(rid)
    assert (row["state"], row["outcome"], row["detail"]) == ("answered", "answered", "cited")
    assert (row["question"], row["scope"]) == ("How long is a batch record kept?", "FDA")
    assert set(row["history"]) == {"received", "retrieved", "answered"}
    assert row["history"]["received"] == first


def test_marks_of_two_requests_do_not_mix(engine):
    tracker = RequestTracker(engine)
    one, two = (f"tracker-{uuid.uuid4().hex[:10]}" for _ in range(2))
    tracker.mark(one, "received", question="q one", scope="MIXED")
    tracker.mark(two, "refused", detail="NOT_RELEVANT")
    assert tracker.get(one)["outcome"] is None
    assert (tracker.get(two)["outcome"], tracker.get(two)["question"]) == ("refused", None)


def test_admit_keeps_the_first_fingerprint_and_reports_the_outcome(engine):
    tracker = RequestTracker(engine)
    rid = f"tracker-{uuid.uuid4().hex[:10]}"
    assert tracker.admit(rid, "fp-one", "q one", "MIXED") == ("fp-one", None)
    assert tracker.admit(rid, "fp-two", "q two", "FDA") == ("fp-one", None)  # the id belongs to the first question
    tracker.mark(rid, "answered")
    assert tracker.admit(rid, "fp-one", "q one", "MIXED") == ("fp-one", "answered")
    assert (tracker.get(rid)["question"], tracker.get(rid)["scope"]) == ("q one", "MIXED")
