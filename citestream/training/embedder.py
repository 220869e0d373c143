"""The relevance embedder: MiniLM-L6's sentence embeddings fine-tuned so that a question lands next to the sentence
that answers it, not next to the sentences that merely share its topic.

Why a second embedding model: on the qa-v2 dev split the cosine of the stock all-MiniLM-L6-v2 separated answerable
from unanswerable questions better than the cross-encoder trained here; tuned on the corpus' own questions and on
contrast questions it does better still, and its cosine alone is the answer flow's relevance score (policy
qa-v2.5; docs/relevance.md, "The relevance embedder"). Retrieval keeps the stock model.

Data: the second stage's mined groups (``groups.py``: LLM questions about corpus sentences, glossary definitions,
FDA Q&A), each question with its answering sentence and its ``negatives`` hardest neighbours; a quarter of the
questions again with typos or an acronym swapped (``pair_noise.reworded``'s edits), and for each group the contrast
questions its answer does not answer (``contrast_questions``: every construction that can be built, up to
``contrasts``). Loss: multiple-negatives ranking (softmax over every sentence of the batch, the question's own
answer the target; scale 20), plus its reverse: each answer picks its own question out of the batch's questions
and contrast questions, which teaches the cosine that a near miss or a false premise is not its answer's question
(docs/relevance.md, "Contrast questions"). The token embeddings are frozen, so the artifact is the encoder layers
in float16 on top of the base package's embeddings, like the cross-encoder's. Deterministic for the seed.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..relevance.scorer import DELTA_FILE, METADATA_FILE
from .groups import SEED, Group
from ..core.text_units import content_terms
from .construction_pairs import OTHER_AUTHORITIES, PREMISE_FORMS, QUALIFIERS
from .pair_noise import with_acronyms, with_typos
from .pairs import _lower_first, changed_number, flipped
from .checkpoint import Checkpoints, Interrupted, run_key
from .train import warmup_then_linear

NAME = "citestream-relevance-embedder"


@dataclass(frozen=True)
class EmbedderConfig:
    lr: float = 2e-5
    batch: int = 32
    negatives: int = 3
    reworded: float = 0.25
    scale: float = 20.0
    max_length: int = 128
    warmup: float = 0.1
    contrasts: int = 3       # contrast questions a group gets at most (0: none); 3 = every construction
    epochs: int = 1
    seed: int = SEED
    threads: int = 2
    chunk: int = 0           # texts per forward pass with GradCache (``batch_backward``); 0: the whole batch at once


@dataclass(frozen=True)
class Example:
    question: str
    texts: tuple[str, ...]          # the answering sentence first, then the negatives
    contrasts: tuple[str, ...] = ()  # questions close to ``question`` the answering sentence does not answer


def contrast_questions(question: str, answer: str, authority: str | None, rng: random.Random) -> list[str]:
    """Questions close to ``question`` that ``answer`` does not answer, one of each construction that can be
    built, in random order: narrowed to a case the sentence does not cover, moved to another authority (FDA
    documents only), presupposing the sentence falsified. The constructions of the cross-encoder's answerability
    pairs (``pairs.py``). Every construction rather than one drawn per group: separation grew with their number
    (docs/relevance.md, "Contrast questions")."""
    built = []
    if question.endswith("?"):
        qualifier = rng.choice(QUALIFIERS)
        if not content_terms(qualifier) & content_terms(answer):
            built.append(f"{question.rstrip('?').rstrip()} {qualifier}?")
    if authority == "FDA":
        built.append(f"According to {rng.choice(OTHER_AUTHORITIES)}, {_lower_first(question)}")
    wrong = changed_number(answer, rng) or flipped(answer)
    if wrong and wrong != answer:
        built.append(rng.choice(PREMISE_FORMS).format(s=_lower_first(wrong.rstrip(" .;:"))))
    rng.shuffle(built)
    return built


def examples(groups: Sequence[Group], acronyms: dict[str, str], config: EmbedderConfig,
             authorities: dict[str, str] | None = None) -> list[Example]:
    """Training rows, shuffled; reworded copies beside their originals; each group's original with up to
    ``config.contrasts`` contrast questions (``authorities``: a group's document → its authority)."""
    rng = random.Random(config.seed)
    rows: list[Example] = []
    for g in groups:
        if len(g.texts) <= config.negatives:
            continue
        texts = g.texts[:config.negatives + 1]
        contrasts = contrast_questions(g.question, texts[0], (authorities or {}).get(g.group), rng)
        rows.append(Example(g.question, texts, tuple(contrasts[:config.contrasts])))
        if rng.random() < config.reworded:
            variant = (with_acronyms(g.question, acronyms, rng) if rng.random() < 0.3 else None) \
                or with_typos(g.question, rng)
            if variant != g.question:
                rows.append(Example(variant, texts))
    rng.shuffle(rows)
    return rows


def train_embedder(base_path: str, rows: Sequence[Example], out_dir: Path,
                   config: EmbedderConfig = EmbedderConfig(), extra_metadata: dict | None = None,
                   checkpoints: Path | None = None, checkpoint_every: int = 10) -> dict:
    """Fine-tune the sentence-transformers model at ``base_path`` on ``rows`` and write its encoder layers to
    ``out_dir``. With ``checkpoints`` (a folder), the run is resumable: its state is saved there every
    ``checkpoint_every`` steps and on SIGTERM / SIGINT (then ``Interrupted`` is raised), and the same call again
    continues from it to the same weights as a run never stopped (``checkpoint.py``)."""
    import torch
    from safetensors.torch import save_file

    from ..embedding import put_encoder_weights

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model, bert = load_trainable(base_path, config.max_length)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr)
    order = random.Random(config.seed)
    epochs = [list(rows)] + [order.sample(list(rows), len(rows)) for _ in range(config.epochs - 1)]  # reshuffled
    batches = [epoch[i:i + config.batch] for epoch in epochs for i in range(0, len(epoch), config.batch)]
    scheduler = warmup_then_linear(optimizer, len(batches), max(1, int(config.warmup * len(batches))))
    run = Checkpoints(checkpoints / f"embedder-{run_key(asdict(config), base_identity(base_path), rows)}",
                      checkpoint_every) if checkpoints else None
    first, running, spent = 0, 0.0, 0.0
    resumed = run.load(optimizer, scheduler) if run else None
    if run and resumed:
        first, weights, extra = resumed
        put_encoder_weights(bert, weights)
        running, spent = extra["running"], extra["seconds"]
        print(f"embedder resumes after step {first}/{len(batches)} from {run.folder}", file=sys.stderr, flush=True)

    def save(step: int) -> None:
        if run:
            run.save(step, trained_weights(bert), optimizer, scheduler,
                     {"running": running, "seconds": spent + time.monotonic() - started})

    model.train()
    started = time.monotonic()
    with run.stop_on_signals() if run else nullcontext():
        for step in range(first, len(batches)):
            loss = batch_backward(model, batches[step], config)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            running = 0.95 * running + 0.05 * loss if step else loss
            done = step + 1
            if done % 10 == 0 or done == len(batches):
                elapsed = time.monotonic() - started
                print(f"embedder step {done}/{len(batches)} loss {running:.3f}, "
                      f"~{(len(batches) - done) * elapsed / (done - first) / 60:.0f} min left", file=sys.stderr,
                      flush=True)
            if run and run.stop_signal is not None and done < len(batches):
                save(done)
                raise Interrupted(done, len(batches), run.folder, run.stop_signal)
            if run and run.due(done) and done < len(batches):
                save(done)
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in trained_weights(bert).items()},
              str(out_dir / DELTA_FILE))
    metadata = {"name": NAME, "kind": "embedder", "config": asdict(config), "examples": len(rows),
                "seconds": round(spent + time.monotonic() - started, 1), **(extra_metadata or {})}
    if first:
        metadata["resumed_after_step"] = first
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    if run:
        run.finish()
    return metadata


def load_trainable(base_path: str, max_length: int):
    """The sentence-transformers model and the transformer under its pooling, token embeddings frozen (the artifact
    stores the rest: the base's embeddings are read from the base at load time)."""
    from sentence_transformers import SentenceTransformer

    from ..embedding import quiet_model_loading

    with quiet_model_loading():
        model = SentenceTransformer(base_path, device="cpu")
    model.max_seq_length = max_length
    bert: Any = model[0].auto_model  # the BERT / MPNet under the pooling (typed as a tensor or module)
    for parameter in bert.embeddings.parameters():
        parameter.requires_grad = False
    return model, bert


def trained_weights(bert) -> dict:
    """What training changes: every weight but the token embeddings."""
    return {k: v for k, v in bert.state_dict().items() if not k.startswith("embeddings.")}


def base_identity(base_path: str) -> dict:
    """What names a base model in a run's key: its folder's name and its weights' sizes (cheap; not a hash)."""
    folder = Path(base_path)
    return {"name": folder.name, "weights": sorted((p.name, p.stat().st_size) for p in folder.glob("*.safetensors"))
            or sorted((p.name, p.stat().st_size) for p in folder.glob("*.bin"))}


def _embed(model, texts: list[str]):
    import torch

    features = model.preprocess(texts)
    return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)


def _ranking_loss(questions, texts, n: int, scale: float):
    """Each of the ``n`` questions picks its answer out of the batch's texts, and each answer its question out of
    the batch's questions and contrast questions (rows: questions first, answers first)."""
    import torch

    targets = torch.arange(n)
    loss = torch.nn.functional.cross_entropy(questions[:n] @ texts.T * scale, targets)
    return loss + torch.nn.functional.cross_entropy(texts[:n] @ questions.T * scale, targets)


def batch_backward(model, batch: Sequence[Example], config: EmbedderConfig) -> float:
    """The batch's loss, its gradients accumulated in the model; the loss value.

    ``config.chunk`` 0: every text of the batch through the model at once (the shipped recipe; MiniLM's batch of
    32 fits). Otherwise GradCache (Gao et al., 2021), for a base whose batch does not fit in memory: every embedding
    without gradients, ``chunk`` texts a pass; the loss and its gradient w.r.t. the embeddings; then each chunk again
    with gradients, that cached gradient backpropagated. The same loss over the same batch, its memory bounded by
    one chunk's activations. Each chunk's second pass replays its first pass's RNG state, so dropout masks match."""
    import torch

    contrasts = [c for r in batch for c in r.contrasts]
    question_texts = [r.question for r in batch] + contrasts  # the batch's questions first, in order
    answer_texts = [r.texts[0] for r in batch] + [t for r in batch for t in r.texts[1:]]  # answers first
    if not config.chunk:
        loss = _ranking_loss(_embed(model, question_texts), _embed(model, answer_texts), len(batch), config.scale)
        loss.backward()
        return loss.item()
    chunks = [(side, texts[i:i + config.chunk]) for side, texts in enumerate((question_texts, answer_texts))
              for i in range(0, len(texts), config.chunk)]
    rng_states, cached = [], []
    with torch.no_grad():
        for _, texts in chunks:
            rng_states.append(torch.get_rng_state())
            cached.append(_embed(model, texts))
    sides = [torch.cat([e for (side, _), e in zip(chunks, cached) if side == s]).requires_grad_() for s in (0, 1)]
    loss = _ranking_loss(sides[0], sides[1], len(batch), config.scale)
    loss.backward()
    offsets = [0, 0]
    after = torch.get_rng_state()
    for (side, texts), state in zip(chunks, rng_states):
        torch.set_rng_state(state)
        grad = sides[side].grad[offsets[side]:offsets[side] + len(texts)]  # type: ignore[index]
        _embed(model, texts).backward(gradient=grad)
        offsets[side] += len(texts)
    torch.set_rng_state(after)
    return loss.item()
