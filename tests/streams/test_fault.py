"""Fault suite: workers killed, restarted, Postgres restarted, broker late — every question still gets one answer.

Runs on private embedded servers (tests/support/reliability.py, private_stack), with
workers as separate processes. `pytest -m faults`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from citestream.infra.broker import EmbeddedBroker

from tests.support.reliability import (
    PrivateStack, ask_and_collect, end_offsets, free_port, make_questions, metric_value, private_stack,  # noqa: F401
    scrape_metrics,
)

pytestmark = [pytest.mark.slow, pytest.mark.faults]


def _assert_exactly_one_answer_each(log, questions) -> None:
    wanted = {q.request_id for q in questions}
    missing = wanted - log.by_key.keys()
    assert not missing, f"{len(missing)} of {len(wanted)} questions never answered, e.g. {sorted(missing)[:5]}"
    assert not log.differing(), f"duplicates with different content: {log.differing()[:5]}"
    for rid in wanted:
        answer = log.by_key[rid][0]
        assert answer["status"] in {"answered", "refused"}
        assert answer["validation_status"] == "PASSED", answer.get("failure_reason")


def test_kill_9_with_200_in_flight_then_a_new_worker_answers_every_question(private_stack, tmp_path):
    """The next worker resumes from the committed offsets and every question gets exactly one answer. Prints how
    long the in-flight questions took after the new worker was ready (4–5 s here; it used to take minutes: faust
    skipped records after the restart and the reconciler had to re-drive them). A time, so printed, never asserted:
    one CI run of 2026-11-24 took 107 s (the reconciler re-drove them), docs/reliability.md."""
    from citestream.store import RequestTracker, engine_for

    settings = private_stack.settings
    questions = make_questions(200, "kill")
    since = asyncio.run(end_offsets(settings, "answers"))
    tracker = RequestTracker(engine_for(private_stack.database_url))
    # the reconciler at its default 120 s: what is answered within 60 s is the stream's own recovery
    patient = {"CITESTREAM_RECONCILE_AFTER_S": "120"}
    first = private_stack.worker(tmp_path / "first.log", **patient)
    second = None
    times: dict[str, float] = {}
    in_flight: set[str] = set()

    async def kill_then_restart(log):
        nonlocal second
        if second is None and len(log.by_key) >= 40:
            os.kill(first.proc.pid, signal.SIGKILL)  # mid-flight: most questions still queued
            first.proc.wait()
            times["kill"] = time.monotonic()
            known = await asyncio.to_thread(tracker.outcomes, [q.request_id for q in questions])
            in_flight.update(rid for rid, row in known.items() if not row["outcome"] and rid not in log.by_key)
            second = private_stack.worker(tmp_path / "second.log", **patient)
        if second is not None and "ready" not in times and b"Worker ready" in second.log_path.read_bytes():
            times["ready"] = time.monotonic()

    try:
        first.wait_ready()
        log = asyncio.run(ask_and_collect(settings, questions, since, 900, kill_then_restart))
        assert second is not None, "the first worker answered everything before it could be killed"
        _assert_exactly_one_answer_each(log, questions)
        assert in_flight, "nothing was in flight at the kill"
        done = max(log.first_at[rid] for rid in in_flight)
        ready = times.get("ready", done)
        print(f"\nkill -9 recovery: {len(in_flight)} questions in flight at the kill; the new worker consumed "
              f"{ready - times['kill']:.1f} s after the kill; all in-flight answered {done - times['kill']:.1f} s "
              f"after the kill ({done - ready:.1f} s after it was ready); all {len(questions)} answered "
              f"{max(log.first_at.values()) - times['kill']:.1f} s after the kill; "
              f"re-drives {_count(second.log_path, b're-drove request_id')}")
        if done - ready > 60:  # for the CI log: what the new worker said while it did not answer
            warnings = [line for line in second.log_path.read_text(errors="replace").splitlines()
                        if "WARNING" in line or "ERROR" in line]
            print("slow recovery; the new worker's warnings:", *warnings[:40], sep="\n  ")
    finally:
        first.stop()
        if second is not None:
            second.stop()


def _count(path, needle: bytes) -> int:
    return path.read_bytes().count(needle)


def test_rolling_restart_of_two_workers_loses_nothing(private_stack, tmp_path):
    settings = private_stack.settings
    questions = make_questions(120, "roll")
    since = asyncio.run(end_offsets(settings, "answers"))
    workers = [private_stack.worker(tmp_path / "a1.log"), private_stack.worker(tmp_path / "b1.log")]
    restarted: list[str] = []

    async def roll(log):
        # restart a at 25 answers, b at 65: each time the other one carries the group
        for name, index, at in (("a", 0, 25), ("b", 1, 65)):
            if name not in restarted and len(log.by_key) >= at:
                restarted.append(name)
                workers[index].stop()
                workers[index] = private_stack.worker(tmp_path / f"{name}2.log")

    try:
        for w in workers:
            w.wait_ready()
        log = asyncio.run(ask_and_collect(settings, questions, since, 600, roll, per_second=3))
        try:
            assert restarted == ["a", "b"], f"answers stopped at {len(log.by_key)} of {len(questions)}"
            _assert_exactly_one_answer_each(log, questions)
        except AssertionError:  # for the CI log, which keeps no worker log: what the workers said
            for path in sorted(tmp_path.glob("*.log")):
                lines = [line for line in path.read_text(errors="replace").splitlines()
                         if ("WARNING" in line or "ERROR" in line) and "quantization" not in line]
                print(f"{path.name}:", *lines[-30:], sep="\n  ")
            raise
    finally:
        for w in workers:
            w.stop()


def test_postgres_restart_under_load_is_waited_out(private_stack, tmp_path):
    settings = private_stack.settings
    questions = make_questions(80, "pg")
    since = asyncio.run(end_offsets(settings, "answers"))
    metrics_port = free_port(29650)
    worker = private_stack.worker(tmp_path / "pg.log", CITESTREAM_METRICS_PORT=str(metrics_port))
    outage: dict[str, float] = {}

    async def restart_postgres(log):
        if "down" not in outage and len(log.by_key) >= 15:
            outage["down"] = time.monotonic()
            await asyncio.to_thread(private_stack.pg.stop)
            await asyncio.sleep(6)  # questions keep arriving while the database is away
            outage["retries"] = metric_value(scrape_metrics(metrics_port), "citestream_db_retries_total")
            outage["db_up"] = metric_value(scrape_metrics(metrics_port), "citestream_database_up")
            await asyncio.to_thread(private_stack.pg.start)

    try:
        worker.wait_ready()
        log = asyncio.run(ask_and_collect(settings, questions, since, 600, restart_postgres))
        assert "down" in outage
        _assert_exactly_one_answer_each(log, questions)
        assert b"database unavailable, retrying" in worker.log_path.read_bytes()
        assert outage["retries"] > 0 and outage["db_up"] == 0
        assert metric_value(scrape_metrics(metrics_port), "citestream_database_up") == 1
    finally:
        worker.stop()
        private_stack.pg.start()


def test_worker_waits_for_a_broker_that_is_not_there_yet(private_stack, tmp_path):
    late = EmbeddedBroker(tmp_path / "late", free_port(29550))
    stack = PrivateStack(tmp_path, private_stack.pg, late, prefix="late.", database=private_stack.database)
    worker = stack.worker(tmp_path / "late.log")
    try:
        worker.wait_for(b"waiting for the Kafka broker", 60)
        time.sleep(3)
        assert worker.proc.poll() is None, "the worker gave up instead of waiting"
        late.start()
        stack.create_topics()
        worker.wait_for(b"is up after", 30)
        worker.wait_ready()
        questions = make_questions(4, "late")
        since = asyncio.run(end_offsets(stack.settings, "answers"))
        log = asyncio.run(ask_and_collect(stack.settings, questions, since, 120))
        _assert_exactly_one_answer_each(log, questions)
    finally:
        worker.stop()
        late.stop()
