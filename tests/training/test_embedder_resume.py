"""The relevance embedder's training, resumable and in bounded memory, on the real MiniLM-L6 and a tiny
configuration: a run stopped by a signal and run again ends with the weights of a run never stopped, and GradCache's
chunked step computes the gradients of the whole batch at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from citestream.relevance.scorer import DELTA_FILE

from .test_refine import CHUNKS, QUESTIONS

TINY = dict(batch=3, negatives=2, reworded=0.0, max_length=32, epochs=4, threads=1)


def tiny_rows(config):
    from citestream.training.embedder import examples
    from citestream.training.groups import Group

    groups = [Group(q["question"], (CHUNKS[q["chunk"]].units[0], *(CHUNKS[c].units[0] for c in range(3)
                                                                    if c != q["chunk"])), "llm", "nda.pdf")
              for q in QUESTIONS] * 3
    return examples(groups, {}, config, {"nda.pdf": "FDA"})


def train(out: Path, checkpoints: Path | None, **overrides):
    from citestream.embedding import model_path
    from citestream.training.embedder import EmbedderConfig, train_embedder

    config = EmbedderConfig(**{**TINY, **overrides})
    return train_embedder(model_path(), tiny_rows(config), out, config, checkpoints=checkpoints, checkpoint_every=1)


RUN_STOPPED_BY_SIGTERM = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from training.test_embedder_resume import train
train(Path({out!r}), Path({checkpoints!r}))
"""


def test_a_run_stopped_by_sigterm_and_run_again_ends_with_the_weights_of_a_run_never_stopped(tmp_path):
    """The real signal path: a child process trains, gets SIGTERM once its first checkpoint is written, saves its
    state after the step under way and exits; the same call again continues from there."""
    whole = train(tmp_path / "whole", tmp_path / "unused")
    assert not (tmp_path / "unused").exists() or not any((tmp_path / "unused").iterdir())  # removed when done
    checkpoints, out = tmp_path / "checkpoints", tmp_path / "resumed"
    code = RUN_STOPPED_BY_SIGTERM.format(tests=str(Path(__file__).resolve().parents[1]), out=str(out),
                                         checkpoints=str(checkpoints))
    child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(checkpoints.glob("*/checkpoint.pt")) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode != 0 and "stopped after step" in stderr, stderr
    assert not (out / DELTA_FILE).exists()
    [saved] = list(checkpoints.glob("*/checkpoint.pt"))
    import torch

    stopped_at = torch.load(saved, weights_only=False)["step"]
    from citestream.training.embedder import EmbedderConfig

    steps = -(-len(tiny_rows(EmbedderConfig(**TINY))) // TINY["batch"]) * TINY["epochs"]
    assert 0 < stopped_at < steps
    again = train(out, checkpoints)
    assert again["resumed_after_step"] == stopped_at
    assert (out / DELTA_FILE).read_bytes() == (tmp_path / "whole" / DELTA_FILE).read_bytes()
    assert not saved.exists()  # the finished run's checkpoint is removed
    assert whole["examples"] == again["examples"]


def test_an_interrupted_run_raises_after_saving_and_another_configuration_does_not_resume_from_it(tmp_path):
    """SIGTERM delivered in this process during the third step: the step completes, the checkpoint holds step 3;
    a run with another learning rate starts afresh (its own key), the same run resumes."""
    import torch

    from citestream.training import embedder as module
    from citestream.training.checkpoint import Interrupted

    real, calls = module.batch_backward, []

    def signalled(model, batch, config):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(model, batch, config)

    module.batch_backward = signalled
    try:
        with pytest.raises(Interrupted) as stop:
            train(tmp_path / "out", tmp_path / "checkpoints")
    finally:
        module.batch_backward = real
    assert stop.value.step == 3 and stop.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handler is put back
    [saved] = list((tmp_path / "checkpoints").glob("*/checkpoint.pt"))
    assert torch.load(saved, weights_only=False)["step"] == 3
    other = train(tmp_path / "other", tmp_path / "checkpoints", lr=3e-5)
    assert "resumed_after_step" not in other and saved.exists()
    assert train(tmp_path / "out", tmp_path / "checkpoints")["resumed_after_step"] == 3


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_gradcache_chunks_give_the_gradients_of_the_whole_batch(mode):
    """The same loss and gradients, chunk by chunk as at once: without dropout for any chunk size; with dropout
    for chunks that hold a side whole (the masks then come from the same RNG draws, replayed in the second pass)."""
    import torch

    from citestream.embedding import model_path
    from citestream.training.embedder import EmbedderConfig, batch_backward, load_trainable

    config = EmbedderConfig(**TINY)
    batch = tiny_rows(config)[:3]
    assert any(r.contrasts for r in batch)
    model, _ = load_trainable(model_path(), config.max_length)
    getattr(model, mode)()
    results = []
    for chunk in ([0, 2] if mode == "eval" else [0, 100]):
        torch.manual_seed(7)
        model.zero_grad()
        loss = batch_backward(model, batch, replace(config, chunk=chunk))
        results.append((loss, {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (whole_loss, whole), (chunked_loss, chunked) = results
    assert whole and whole.keys() == chunked.keys()
    assert chunked_loss == pytest.approx(whole_loss, rel=1e-5)
    for name in whole:
        assert torch.allclose(whole[name], chunked[name], atol=1e-5, rtol=1e-3), name


def test_an_embedder_trained_over_another_base_names_it_and_loads_over_it(tmp_path, monkeypatch):
    """``citestream scorer embedder --base``: the artifact records its base by name and the loader finds that base in
    the state folder's models/ (where `make mpnet` puts all-mpnet-base-v2; a copy of MiniLM-L6 stands in for it); a
    sentence-transformers folder as published loads zero-shot."""
    import shutil

    import numpy as np

    from citestream.config import get_settings
    from citestream.embedding import base_name, model_path, relevance_embedder_at
    from citestream.training.embedder import EmbedderConfig, train_embedder

    state = tmp_path / "state"
    base = state / "models" / "another-base"
    shutil.copytree(model_path(), base)
    monkeypatch.setenv("CITESTREAM_STATE_DIR", str(state))
    get_settings.cache_clear()
    try:
        config = EmbedderConfig(**{**TINY, "epochs": 1})
        meta = train_embedder(str(base), tiny_rows(config), tmp_path / "tuned", config,
                              extra_metadata={"base": base_name(base)})
        assert meta["base"] == "another-base" and base_name(Path(model_path())) == "all-MiniLM-L6-v2"
        tuned, zero_shot = relevance_embedder_at(tmp_path / "tuned"), relevance_embedder_at(base)
        assert tuned.dim == zero_shot.dim == 384 and zero_shot.name.startswith("another-base@")
        vectors = tuned.embed(["How long is a batch record kept?"])
        assert np.isfinite(vectors).all() and not np.allclose(vectors, zero_shot.embed(["How long is a batch "
                                                                                         "record kept?"]))
        shutil.rmtree(base)
        relevance_embedder_at.cache_clear()
        with pytest.raises(FileNotFoundError, match="make mpnet"):
            relevance_embedder_at(tmp_path / "tuned")
    finally:
        get_settings.cache_clear()
        relevance_embedder_at.cache_clear()
