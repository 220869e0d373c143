"""Issue 54 item 7: a training checkpoint is plain data, read with ``weights_only=True``. One holding a pickled
object is refused and the object never runs; a plain one restores every RNG exactly (the resume tests in
test_embedder_resume.py check the weights end as an uninterrupted run's)."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
import torch

from citestream.training.checkpoint import CheckpointRefused, Checkpoints


def _optimizer_and_scheduler():
    layer = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-3)
    return layer, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)


class _RunsOnLoad:
    """What a local user could leave in the predictable checkpoint folder: unpickling it runs ``touch``."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_checkpoint_holding_a_pickled_object_is_refused_and_never_runs(tmp_path):
    layer, optimizer, scheduler = _optimizer_and_scheduler()
    run = Checkpoints(tmp_path / "run", every=1)
    run.save(1, layer.state_dict(), optimizer, scheduler)
    state = torch.load(run.path, weights_only=True)
    marker = tmp_path / "ran"
    torch.save({**state, "extra": {"payload": _RunsOnLoad(str(marker))}}, run.path)
    with pytest.raises(CheckpointRefused, match="plain data"):
        run.load(optimizer, scheduler)
    assert not marker.exists(), "loading the checkpoint ran the pickled object"


def test_a_checkpoint_restores_every_rng_from_plain_data(tmp_path):
    layer, optimizer, scheduler = _optimizer_and_scheduler()
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    run = Checkpoints(tmp_path / "run", every=1)
    run.save(4, layer.state_dict(), optimizer, scheduler, {"running": 0.5})
    expected = random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()
    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    step, weights, extra = run.load(optimizer, scheduler)
    assert (step, extra) == (4, {"running": 0.5}) and set(weights) == {"weight", "bias"}
    assert (random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()) == expected
