"""Step time and peak memory of the relevance embedder's recipe on a base model, per way of fitting its batch in
memory (docs/experiments/2026-11-27-mpnet.md): GradCache with N texts a pass (``--chunk N``), and activation
checkpointing of every layer over the whole batch. Each option runs in its own process (its peak RSS is its own) on
the recipe's real rows (built once, as ``citestream scorer embedder`` builds them, kept in the state folder), for a
few steps.

Run: ``python scripts/embedder_step_cost.py --base .state/models/all-mpnet-base-v2 --options chunk:16 chunk:64
checkpointing --steps 3``. Prints one line per option: wall and CPU seconds of each step, peak RSS in GB.
"""

from __future__ import annotations

import argparse
import json
import pickle
import resource
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path


def build_rows(path: Path) -> None:
    """The recipe's rows, as ``citestream scorer embedder`` makes them (same data, contrasts, seed)."""
    from citestream.embedding import get_embedder
    from citestream.training.corpus import load_corpus
    from citestream.training.embedder import EmbedderConfig, examples
    from citestream.training.groups import mine_groups
    from citestream.training.make import ALL_DOCUMENT_QUESTIONS, DEFAULT_CORPUS, DEFAULT_FDAQA
    from citestream.training.pair_noise import corpus_acronyms
    from citestream.training.pairs import fdaqa_rows
    from citestream.training.questions import load_questions

    chunks = load_corpus(DEFAULT_CORPUS)
    groups = mine_groups(chunks, load_questions(ALL_DOCUMENT_QUESTIONS), fdaqa_rows(DEFAULT_FDAQA),
                         get_embedder().embed)
    rows = examples(groups, corpus_acronyms(chunks), EmbedderConfig(), {c.pdf: c.authority for c in chunks})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(rows))


def run_option(base: str, rows_path: Path, option: str, steps: int, threads: int) -> dict:
    """A few optimizer steps of the recipe's first batches in this process."""
    import torch

    from citestream.training.embedder import EmbedderConfig, batch_backward, load_trainable

    rows = pickle.loads(rows_path.read_bytes())
    config = EmbedderConfig(threads=threads)
    if option.startswith("chunk:"):
        config = replace(config, chunk=int(option.split(":")[1]))
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model, bert = load_trainable(base, config.max_length)
    if option == "checkpointing":
        checkpoint_layers(bert)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    model.train()
    seconds, cpu_seconds = [], []
    for step in range(steps):
        started, cpu = time.monotonic(), _cpu()
        batch_backward(model, rows[step * config.batch:(step + 1) * config.batch], config)
        optimizer.step()
        optimizer.zero_grad()
        seconds.append(round(time.monotonic() - started, 1))
        cpu_seconds.append(round(_cpu() - cpu, 1))
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    return {"option": option, "base": Path(base).name, "threads": threads, "step_seconds": seconds,
            "step_cpu_seconds": cpu_seconds, "peak_rss_gb": round(peak_gb, 2)}


def checkpoint_layers(encoder) -> None:
    """Activation checkpointing over every transformer layer (torch.utils.checkpoint, non-reentrant, RNG kept):
    transformers' ``gradient_checkpointing_enable`` refuses MPNetModel."""
    from torch.utils.checkpoint import checkpoint

    for layer in encoder.encoder.layer:
        layer.forward = lambda *args, _forward=layer.forward, **kwargs: checkpoint(
            _forward, *args, use_reentrant=False, **kwargs)


def _cpu() -> float:
    """This process's CPU seconds: on shared cores a step's wall time depends on the neighbours, its CPU time less."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--options", nargs="+", default=["chunk:16", "chunk:64", "checkpointing"])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2,
                        help="torch threads (the recipe's 2; 1 wastes less on cores other jobs share)")
    parser.add_argument("--rows", help=argparse.SUPPRESS)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_option(args.base, Path(args.rows), args.one, args.steps, args.threads)), flush=True)
        return 0
    from citestream.config import get_settings

    rows_path = get_settings().state_dir / "relevance" / "embedder_rows.pickle"
    if not rows_path.exists():
        build_rows(rows_path)
    for option in args.options:
        subprocess.run([sys.executable, __file__, "--base", args.base, "--rows", str(rows_path), "--one", option,
                        "--steps", str(args.steps), "--threads", str(args.threads)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
