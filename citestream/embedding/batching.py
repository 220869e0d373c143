"""Calls from several threads that meet at a model become one forward pass (issue 16 item 2).

A worker runs several questions at once (the retrieve agent takes its records in groups, ``stream.take_events``);
their stages reach the models from different threads. ``Coalescer`` serves every call that arrives while a pass
is running with one call over all of them as soon as that pass ends — no added wait when a call arrives alone, and
one pass at a time (torch already uses both cores for one). The stage functions stay plain, one record each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import numpy as np

from .. import metrics

T = TypeVar("T")
R = TypeVar("R")


class _Slot(Generic[T, R]):
    __slots__ = ("done", "error", "item", "result")

    def __init__(self, item: T):
        self.item = item
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None


class Coalescer(Generic[T, R]):
    """``coalescer(item)`` → ``run([item, ...])[i]`` for this caller's item, with the items of every caller waiting
    at the same time in one ``run``. ``run`` returns one result per item, in order; if it raises, every caller of
    that run gets the error."""

    def __init__(self, run: Callable[[list[T]], Sequence[R]], name: str):
        self._run = run
        self._name = name
        self._cond = threading.Condition()
        self._pending: list[_Slot[T, R]] = []
        self._busy = False

    def __call__(self, item: T) -> R:
        slot: _Slot[T, R] = _Slot(item)
        with self._cond:
            self._pending.append(slot)
            while self._busy and not slot.done:
                self._cond.wait()
            if not slot.done:  # no pass running: this caller runs one for everything waiting, itself included
                self._busy = True
                batch, self._pending = self._pending, []
        if not slot.done:
            self._serve(batch)
        if slot.error is not None:
            raise slot.error
        return slot.result  # type: ignore[return-value]

    def _serve(self, batch: list[_Slot[T, R]]) -> None:
        metrics.MODEL_BATCH_ITEMS.labels(self._name).observe(len(batch))
        try:
            results = list(self._run([s.item for s in batch]))
            if len(results) != len(batch):
                raise RuntimeError(f"{self._name}: {len(results)} results for {len(batch)} items")
            for s, r in zip(batch, results):
                s.result = r
        except BaseException as exc:  # every caller of this pass sees it, none waits forever
            for s in batch:
                s.error = exc
        finally:
            with self._cond:
                for s in batch:
                    s.done = True
                self._busy = False
                self._cond.notify_all()


def split_rows(flat: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """One pass's output cut back into its calls' parts (``sizes`` rows each, in order)."""
    return list(np.split(flat, np.cumsum(sizes)[:-1])) if len(sizes) else []
