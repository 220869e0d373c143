"""The relevance embedder: MiniLM-L6's sentence embeddings fine-tuned so that a question lands next to the sentence
that answers it, not next to the sentences that merely share its topic.

Why a second embedding model: on the qa-v2 dev split the cosine of the stock all-MiniLM-L6-v2 separated answerable
from unanswerable questions better than the cross-encoder trained here; tuned on the corpus' own questions and on
contrast questions it does better still, and its cosine alone is the answer flow's relevance score (policy
qa-v2.5; docs/relevance.md, "The relevance embedder"). Retrieval keeps the stock model.

Data: the second stage's mined groups (``groups.py``: LLM questions about corpus sentences, glossary definitions,
FDA Q&A), each question with its answering sentence and its ``negatives`` hardest neighbours; a quarter of the
questions again with typos or an acronym swapped (``pairs.reworded``'s edits), and for each group the contrast
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..model import DELTA_FILE, METADATA_FILE
from .groups import SEED, Group
from ...text import content_terms
from .pairs import (OTHER_AUTHORITIES, PREMISE_FORMS, QUALIFIERS, _lower_first, changed_number, flipped,
                    with_acronyms, with_typos)
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
                   config: EmbedderConfig = EmbedderConfig(), extra_metadata: dict | None = None) -> dict:
    import torch
    from safetensors.torch import save_file
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model = SentenceTransformer(base_path, device="cpu")
    model.max_seq_length = config.max_length
    bert: Any = model[0].auto_model  # the BERT under the pooling (typed as a tensor or module)
    for parameter in bert.embeddings.parameters():
        parameter.requires_grad = False
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr)
    order = random.Random(config.seed)
    epochs = [list(rows)] + [order.sample(list(rows), len(rows)) for _ in range(config.epochs - 1)]  # reshuffled
    batches = [epoch[i:i + config.batch] for epoch in epochs for i in range(0, len(epoch), config.batch)]
    scheduler = warmup_then_linear(optimizer, len(batches), max(1, int(config.warmup * len(batches))))

    def embed(texts: list[str]):
        features = model.preprocess(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    model.train()
    started, running = time.monotonic(), 0.0
    for step, batch in enumerate(batches):
        contrasts = [c for r in batch for c in r.contrasts]
        questions = embed([r.question for r in batch] + contrasts)  # the batch's questions first, in order
        texts = embed([r.texts[0] for r in batch] + [t for r in batch for t in r.texts[1:]])  # answers first
        targets = torch.arange(len(batch))
        loss = torch.nn.functional.cross_entropy(questions[:len(batch)] @ texts.T * config.scale, targets)
        # and each answer picks its own question out of the batch's questions and contrast questions
        loss = loss + torch.nn.functional.cross_entropy(texts[:len(batch)] @ questions.T * config.scale, targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        running = 0.95 * running + 0.05 * loss.item() if step else loss.item()
        if (step + 1) % 10 == 0 or step + 1 == len(batches):
            elapsed = time.monotonic() - started
            print(f"embedder step {step + 1}/{len(batches)} loss {running:.3f}, "
                  f"~{(len(batches) - step - 1) * elapsed / (step + 1) / 60:.0f} min left", file=sys.stderr, flush=True)
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in bert.state_dict().items()
               if not k.startswith("embeddings.")}, str(out_dir / DELTA_FILE))
    metadata = {"name": NAME, "kind": "embedder", "config": asdict(config), "examples": len(rows),
                "seconds": round(time.monotonic() - started, 1), **(extra_metadata or {})}
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return metadata
