"""Distil the relevance model into one with fewer encoder layers: the cross-encoder is most of a question's CPU
(issue 16), and its cost is linear in the layers.

The student starts from every other layer of the teacher (the head on top unchanged) and learns the teacher's
logit, mean squared error, on the pairs the flow hands the cross-encoder: for each training question, the corpus
sentence units the embedding model ranks closest (the blend reads the ``cross_k`` closest units of a question's
pool) and a few drawn from further down. The questions are the training material's (the LLM questions over every
document, the off-topic ones, FDA's Q&A), never the qa-v2 splits. A share of the questions is held out: how often
the student's best unit is the teacher's, and how far its logits are, are recorded with the artifact.
"""

from __future__ import annotations

import copy
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...text import scored_units
from ..model import DELTA_FILE, METADATA_FILE, _load_compact, file_sha256
from .corpus import CorpusChunk
from .pairs import Pair, pairs_sha256


@dataclass(frozen=True)
class DistillConfig:
    layers: int = 3
    closest: int = 20       # units per question the embedding ranks closest (what the blend gives the cross-encoder)
    further: int = 4        # and drawn from the next ``reach``
    reach: int = 300
    fdaqa: int = 1000       # FDA Q&A questions sampled (other guidances: mostly questions the corpus does not answer)
    held_out: float = 0.05  # share of the questions kept for the agreement figures
    epochs: float = 1.0
    lr: float = 5e-5
    batch_size: int = 16
    warmup: float = 0.1
    seed: int = 20261125
    threads: int = 2


def distillation_pairs(chunks: Sequence[CorpusChunk], questions: Sequence[str],
                       embed: Callable[[list[str]], np.ndarray], config: DistillConfig) -> list[list[Pair]]:
    """Per question, its pairs with the corpus units (label 0: the teacher gives the target)."""
    units = sorted({u for c in chunks for u in scored_units(c.text)})
    unit_vectors = np.asarray(embed(units))
    question_vectors = np.asarray(embed(list(questions)))
    rng = random.Random(config.seed)
    out = []
    for question, vector in zip(questions, question_vectors):
        order = np.argsort(-(unit_vectors @ vector), kind="stable")
        chosen = [*order[:config.closest], *rng.sample(list(order[config.closest:config.reach]), config.further)]
        out.append([Pair(question, units[i], 0, "distill", "sentence", "distill") for i in chosen])
    return out


def _logits(model, tokenizer, pairs: Sequence[Pair], max_length: int, batch_size: int = 32) -> np.ndarray:
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].question) + len(pairs[i].text))
    out = np.zeros(len(pairs), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            enc = tokenizer([pairs[i].question for i in batch], [pairs[i].text for i in batch], truncation=True,
                            max_length=max_length, padding=True, return_tensors="pt")
            out[batch] = model(**enc).logits.squeeze(-1).numpy()
            if start // batch_size % 200 == 0:
                print(f"teacher {start}/{len(order)} pairs", file=sys.stderr, flush=True)
    return out


def _student(teacher, layers: int):
    import torch

    student = copy.deepcopy(teacher)
    total = len(teacher.bert.encoder.layer)
    if not 1 <= layers <= total:
        raise ValueError(f"a student has 1 to {total} layers, not {layers}")
    keep = list(range(0, total, total // layers))[:layers]  # every other of 6 for 3: 0, 2, 4
    student.bert.encoder.layer = torch.nn.ModuleList([student.bert.encoder.layer[i] for i in keep])
    student.config.num_hidden_layers = layers
    for parameter in student.bert.embeddings.parameters():
        parameter.requires_grad = False
    return student, keep


def agreement(teacher: np.ndarray, student: np.ndarray, sizes: Sequence[int]) -> dict:
    """Over held-out questions: the share whose best unit is the same, and the logits' mean absolute difference."""
    same, start = [], 0
    for n in sizes:
        same.append(int(np.argmax(teacher[start:start + n]) == np.argmax(student[start:start + n])))
        start += n
    return {"questions": len(sizes), "same_best_unit": round(float(np.mean(same)), 4) if same else None,
            "mean_abs_logit_diff": round(float(np.mean(np.abs(teacher - student))), 4) if len(teacher) else None}


def distill(teacher_dir: Path, groups: Sequence[list[Pair]], out_dir: Path, config: DistillConfig = DistillConfig(),
            name: str = "citestream-relevance-distilled") -> dict:
    import torch
    from safetensors.torch import save_file

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    encoder, teacher_name = _load_compact(teacher_dir, 256)
    teacher, tokenizer, max_length = encoder.model, encoder.tokenizer, encoder.max_length or 256
    order = list(range(len(groups)))
    rng.shuffle(order)
    cut = int(len(order) * config.held_out)
    held = [groups[i] for i in order[:cut]]
    train_pairs = [p for i in order[cut:] for p in groups[i]]
    held_pairs = [p for g in held for p in g]
    started = time.monotonic()
    targets = _logits(teacher, tokenizer, train_pairs, max_length)
    held_targets = _logits(teacher, tokenizer, held_pairs, max_length)
    labelled_s = time.monotonic() - started
    student, kept = _student(teacher, config.layers)

    lengths = [len(p.question) + len(p.text) for p in train_pairs]
    by_length = sorted(range(len(train_pairs)), key=lambda i: (lengths[i], rng.random()))
    batches = [by_length[i:i + config.batch_size] for i in range(0, len(by_length), config.batch_size)]
    steps = max(1, int(len(batches) * config.epochs))
    schedule: list[list[int]] = []
    while len(schedule) < steps:
        shuffled = batches[:]
        rng.shuffle(shuffled)
        schedule += shuffled
    schedule = schedule[:steps]
    trainable = [p for p in student.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.01)
    warmup = max(1, int(steps * config.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    student.train()
    trained_at, running = time.monotonic(), 0.0
    for step, batch in enumerate(schedule, start=1):
        enc = tokenizer([train_pairs[i].question for i in batch], [train_pairs[i].text for i in batch],
                        truncation=True, max_length=max_length, padding=True, return_tensors="pt")
        loss = torch.nn.functional.mse_loss(student(**enc).logits.squeeze(-1), torch.from_numpy(targets[batch]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % 100 == 0 or step == steps:
            elapsed = time.monotonic() - trained_at
            print(f"distil step {step}/{steps} mse {running:.3f}, ~{(steps - step) * elapsed / step / 60:.0f} min left",
                  file=sys.stderr, flush=True)
    student.eval()
    held_student = _logits(student, tokenizer, held_pairs, max_length)
    out_dir.mkdir(parents=True, exist_ok=True)
    delta = {k: v.detach().to(torch.float16).contiguous() for k, v in student.state_dict().items()
             if not k.startswith("bert.embeddings.")}
    save_file(delta, str(out_dir / DELTA_FILE))
    metadata = {
        "name": name, "base": json.loads((teacher_dir / METADATA_FILE).read_text()).get("base"),
        "layers": config.layers, "max_length": max_length, "teacher": teacher_name,
        "teacher_delta_sha256": file_sha256(teacher_dir / DELTA_FILE), "teacher_layers_kept": kept,
        "distill_config": config.__dict__, "pairs": len(train_pairs), "pairs_sha256": pairs_sha256(train_pairs),
        "held_out": agreement(held_targets, held_student, [len(g) for g in held]),
        "label_seconds": round(labelled_s, 1), "train_seconds": round(time.monotonic() - trained_at, 1),
    }
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return metadata
