"""Resumable training: everything a training loop needs to continue where it stopped and end with the weights an
uninterrupted run would have (the trained weights, the optimizer's moments, the scheduler, every RNG, the step).

Why: the relevance embedder's recipe on a larger base (all-mpnet-base-v2) takes hours on 2 shared cores; a stop
(Ctrl-C, SIGTERM, a session's end) must not lose them. A checkpoint is written every ``every`` steps and when
SIGTERM or SIGINT arrives (after the step under way; a second signal stops at once, the last checkpoint stays). Its
folder is named by a key of the run's inputs (configuration, base weights, training rows), so only the same run
resumes from it. Writes are atomic: a kill while saving leaves the previous checkpoint.

A checkpoint is read with ``torch.load(weights_only=True)``: its folder is predictable under the state directory, and
a full unpickle would run whatever object a local user put there. So everything saved is plain data (tensors,
numbers, strings, lists, tuples, dicts): the Python and NumPy RNG states are turned into lists of ints
(``_plain_rng``) and back. A file holding anything else is refused (``CheckpointRefused``), never executed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

CHECKPOINT_FILE = "checkpoint.pt"


class CheckpointRefused(Exception):
    """The checkpoint file holds something other than plain data (or is not a checkpoint): nothing of it is used."""


def _plain_rng() -> dict[str, Any]:
    """The Python and NumPy RNG states as lists of ints and strings (what ``weights_only`` loads)."""
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": [version, list(internal), gauss],
            "numpy": [str(name), [int(k) for k in keys], int(pos), int(has_gauss), float(cached)]}


def _restore_rng(state: dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((int(version), tuple(int(x) for x in internal), None if gauss is None else float(gauss)))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((str(name), np.asarray(keys, dtype=np.uint32), int(pos), int(has_gauss), float(cached)))


class Interrupted(Exception):
    """Training stopped on a signal after saving a checkpoint; running the same command again continues it."""

    def __init__(self, step: int, steps: int, folder: Path, signum: int):
        super().__init__(f"stopped after step {step} of {steps} ({signal.Signals(signum).name}); checkpoint in "
                         f"{folder}: run the same command again to continue")
        self.step, self.steps, self.folder, self.signum = step, steps, folder, signum


def run_key(*parts: Any) -> str:
    """A stable key of the run's inputs (anything JSON can write)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


class Checkpoints:
    """Save and restore one run's training state in ``folder``."""

    def __init__(self, folder: Path, every: int):
        self.folder = folder
        self.every = max(1, every)
        self.stop_signal: int | None = None

    @property
    def path(self) -> Path:
        return self.folder / CHECKPOINT_FILE

    def due(self, step: int) -> bool:
        return step % self.every == 0

    def save(self, step: int, weights: dict, optimizer, scheduler, extra: dict | None = None) -> None:
        import torch

        self.folder.mkdir(parents=True, exist_ok=True)
        state = {"step": step, "weights": weights, "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(), "rng": _plain_rng(),
                 "extra": extra or {}}
        partial = self.path.with_suffix(".partial")
        torch.save(state, partial)
        os.replace(partial, self.path)

    def load(self, optimizer, scheduler) -> tuple[int, dict, dict] | None:
        """The saved step, weights and extra, with the optimizer, the scheduler and the RNGs restored; None when
        there is nothing to resume; ``CheckpointRefused`` when the file holds more than plain data."""
        import pickle

        import torch

        if not self.path.is_file():
            return None
        try:
            state = torch.load(self.path, weights_only=True)
            step, weights, extra, rng = state["step"], state["weights"], state["extra"], state["rng"]
        except (pickle.UnpicklingError, RuntimeError, KeyError, TypeError) as exc:
            raise CheckpointRefused(f"{self.path}: not a checkpoint of plain data ({type(exc).__name__}: "
                                    f"{str(exc)[:200]}); remove it to train from the start") from None
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        _restore_rng(rng)
        return step, weights, extra

    def finish(self) -> None:
        """The run's result is written: its checkpoint is no longer needed (it is the size of a model and twice)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    @contextmanager
    def stop_on_signals(self) -> Iterator[None]:
        """SIGTERM / SIGINT ask the loop to stop after the step under way (``stop_signal``); a second one is the
        default action at once. Outside the main thread signals cannot be caught, and nothing changes."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

        def ask_to_stop(signum, _frame):
            self.stop_signal = signum
            for s, handler in previous.items():
                signal.signal(s, handler)

        for s in previous:
            signal.signal(s, ask_to_stop)
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
