"""Fault suite: workers killed, restarted, Postgres restarted, broker late — every question still gets one answer.

Runs on private embedded servers (reliability_support.private_stack), with
workers as separate processes. `pytest -m faults`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from citestream.infra.broker import EmbeddedBroker

from .reliability_support import (
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


def test_kill_9_with_500_in_flight_then_a_new_worker_answers_every_question(private_stack, tmp_path):
    settings = private_stack.settings
    questions = make_questions(500, "kill")
    since = asyncio.run(end_offsets(settings, "answers"))
    first = private_stack.worker(tmp_path / "first.log")
    second = None

    async def kill_then_restart(log):
        nonlocal second
        if second is None and len(log.by_key) >= 40:
            os.kill(first.proc.pid, signal.SIGKILL)  # mid-flight: hundreds still queued
            first.proc.wait()
            second = private_stack.worker(tmp_path / "second.log")

    try:
        first.wait_ready()
        log = asyncio.run(ask_and_collect(settings, questions, since, 900, kill_then_restart))
        assert second is not None, "the first worker answered everything before it could be killed"
        _assert_exactly_one_answer_each(log, questions)
    finally:
        first.stop()
        if second is not None:
            second.stop()


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
        assert restarted == ["a", "b"]
        _assert_exactly_one_answer_each(log, questions)
    finally:
        for w in workers:
            w.stop()


def test_postgres_restart_under_load_is_waited_out(private_stack, tmp_path):
    settings = private_stack.settings
    questions = make_questions(80, "pg")
    since = asyncio.run(end_offsets(settings, "answers"))
    metrics_port = free_port(59650)
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
    late = EmbeddedBroker(tmp_path / "late", free_port(59550))
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
