"""The second training stage: the first stage's cross-encoder, trained further on mined groups (``groups.py``).

Loss per batch of four groups: softmax cross-entropy over each group's logits with the answering sentence as the
target (listwise: the order among on-topic sentences), plus binary cross-entropy on every pair (the score stays a
probability the thresholds can read). Each batch also replays eight sentence pairs of the first stage — every
authority, premise, off-topic and claims pair, a quarter of the rest — so the refusals it learnt are not
forgotten. Sentences only: the model scores sentence units at run time (a passage scores as its best sentence).

Measured on qa-v2 dev (docs/relevance.md): the answering sentence is quoted for more answerable questions at every
refusal rate, and the probabilities come out lower, so the thresholds were chosen again on dev.
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..relevance.scorer import DELTA_FILE, METADATA_FILE, load_compact
from .groups import SEED, Group, groups_by_source
from .pairs import Pair
from .train import warmup_then_linear

REPLAYED_SOURCES = ("authority", "premise", "offtopic", "claims")


@dataclass(frozen=True)
class RefineConfig:
    lr: float = 2e-5
    groups_per_batch: int = 4
    replay_per_batch: int = 8
    negatives: int = 7
    max_length: int = 128
    epochs: float = 1.0
    warmup: float = 0.1
    seed: int = SEED
    threads: int = 2


def _replayed(pairs: list[Pair], rng: random.Random) -> list[Pair]:
    return [p for p in pairs if p.kind == "sentence" and (p.source in REPLAYED_SOURCES or rng.random() < 0.25)]


def refine(base: Path, groups: list[Group], replay: list[Pair], out_dir: Path,
           config: RefineConfig = RefineConfig(), extra_metadata: dict | None = None) -> dict:
    import torch
    from safetensors.torch import save_file

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    usable = [(g.question, g.texts[:config.negatives + 1]) for g in groups if len(g.texts) >= 3]
    replay = _replayed(replay, rng)
    encoder, _ = load_compact(base, config.max_length)
    model, tokenizer = encoder.model, encoder.tokenizer
    for parameter in model.bert.embeddings.parameters():
        parameter.requires_grad = False
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.01)
    order = list(range(len(usable)))
    rng.shuffle(order)
    steps = int(len(order) / config.groups_per_batch * config.epochs)
    while len(order) < steps * config.groups_per_batch:
        more = list(range(len(usable)))
        rng.shuffle(more)
        order += more
    scheduler = warmup_then_linear(optimizer, steps, max(1, steps // 10))
    replay_order = list(range(len(replay)))
    rng.shuffle(replay_order)
    started, running = time.monotonic(), 0.0
    for step in range(steps):
        batch = [usable[i] for i in order[step * config.groups_per_batch:(step + 1) * config.groups_per_batch]]
        questions = [q for q, texts in batch for _ in texts]
        texts = [t for _, group in batch for t in group]
        labels = [1.0 if j == 0 else 0.0 for _, group in batch for j in range(len(group))]
        if replay:
            again = [replay[replay_order[(step * config.replay_per_batch + k) % len(replay_order)]]
                     for k in range(config.replay_per_batch)]
            questions += [p.question for p in again]
            texts += [p.text for p in again]
            labels += [float(p.label) for p in again]
        enc = tokenizer(questions, texts, truncation=True, max_length=config.max_length, padding=True,
                        return_tensors="pt")
        logits = model(**enc).logits.squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.tensor(labels))
        starts = np.cumsum([0] + [len(group) for _, group in batch])
        listwise = sum(torch.nn.functional.cross_entropy(logits[a:b].unsqueeze(0), torch.tensor([0]))
                       for a, b in itertools.pairwise(starts))
        loss = loss + listwise / len(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
        if (step + 1) % 25 == 0 or step + 1 == steps:
            elapsed = time.monotonic() - started
            print(f"refine step {step + 1}/{steps} loss {running:.3f}, "
                  f"~{(steps - step - 1) * elapsed / (step + 1) / 60:.0f} min left", file=sys.stderr, flush=True)
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()
               if not k.startswith("bert.embeddings.")}, str(out_dir / DELTA_FILE))
    metadata = json.loads((base / METADATA_FILE).read_text())
    metadata.pop("thresholds", None)  # chosen for the base model: choose them again for this one
    metadata["refine"] = {"config": asdict(config), "groups": len(usable), "replayed_pairs": len(replay),
                          "groups_by_source": groups_by_source(groups),
                          "seconds": round(time.monotonic() - started, 1), **(extra_metadata or {})}
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return metadata
