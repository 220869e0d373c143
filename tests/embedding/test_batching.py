"""Calls from several threads that meet at a model are served by one pass, each caller getting its own result."""

from __future__ import annotations

import threading

import pytest

from citestream.embedding.batching import Coalescer


class _Recorder:
    """A ``run`` whose first pass waits until ``callers`` calls are queued, so the others must meet in the second."""

    def __init__(self, coalescer_of, callers: int):
        self.passes: list[list[int]] = []
        self.callers = callers
        self.coalescer = coalescer_of(self)

    def __call__(self, items: list[int]) -> list[int]:
        if not self.passes:
            while len(self.coalescer._pending) < self.callers - 1:
                threading.Event().wait(0.005)
        self.passes.append(items)
        if -1 in items:
            raise ValueError("bad item")
        return [i * 10 for i in items]


def _call_together(coalescer: Coalescer, items: list[int]) -> dict[int, object]:
    results: dict[int, object] = {}

    def call(i: int) -> None:
        try:
            results[i] = coalescer(i)
        except ValueError as exc:
            results[i] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in items]
    for t in threads:
        t.start()
        threading.Event().wait(0.01)  # the first caller starts a pass before the others arrive
    for t in threads:
        t.join(timeout=10)
    return results


def test_calls_waiting_for_a_pass_are_served_by_one_pass_with_their_own_results():
    recorder = _Recorder(lambda run: Coalescer(run, "test"), callers=5)
    results = _call_together(recorder.coalescer, [1, 2, 3, 4, 5])
    assert results == {i: i * 10 for i in range(1, 6)}
    assert recorder.passes[0] == [1] and sorted(recorder.passes[1]) == [2, 3, 4, 5] and len(recorder.passes) == 2


def test_an_error_in_a_pass_reaches_each_of_its_callers_and_the_next_pass_runs():
    recorder = _Recorder(lambda run: Coalescer(run, "test"), callers=3)
    results = _call_together(recorder.coalescer, [1, -1, 2])
    assert results[1] == 10
    assert isinstance(results[-1], ValueError) and isinstance(results[2], ValueError)  # both in the failed pass
    assert recorder.coalescer(3) == 30  # not stuck


def test_a_run_that_loses_results_is_an_error_not_a_wrong_answer():
    coalescer = Coalescer(lambda items: items[:-1], "test")
    with pytest.raises(RuntimeError, match="0 results for 1 items"):
        coalescer(1)


def test_a_pass_output_is_cut_back_into_its_calls_parts_empty_ones_included():
    import numpy as np

    from citestream.embedding.batching import split_rows

    parts = split_rows(np.arange(5), [2, 0, 3])
    assert [p.tolist() for p in parts] == [[0, 1], [], [2, 3, 4]]
    assert split_rows(np.zeros(0), []) == []
