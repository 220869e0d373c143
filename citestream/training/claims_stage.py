"""The third training stage: the refined cross-encoder trained further on the ``claims`` source — claims built from
corpus sentences with their polarity flipped, their actor swapped, a number, unit or restrictor changed
(``constructions.py``) — with as many first-stage sentence pairs replayed, so what it learnt before is kept.

Why a stage of its own: only claim verification reads the cross-encoder (the answer flow scores with the relevance
embedder's cosine alone), and the two stages before it take an hour on 2 cores; this one takes minutes and leaves
them as they are. Two documents are held out, as in the first stage, to measure it. Measured on the claims dev
sets, not shipped and not in ``make model`` (docs/experiments/2026-11-27-claims.md).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..relevance.scorer import METADATA_FILE, load_compact
from .constructions import constructed_claims
from .corpus import CorpusChunk
from .pair_set import pairs_sha256
from .pairs import Pair
from .train import TrainConfig, evaluate, fit, save_delta

CONFIG = TrainConfig(lr=2e-5, max_length=128, seed=20261127)


def claims_pairs(chunks: Sequence[CorpusChunk]) -> list[Pair]:
    return [Pair(claim, unit, label, "claims", "sentence", pdf)
            for claim, unit, label, _, pdf in constructed_claims(chunks)]


def tune_claims(base: Path, claims: Sequence[Pair], replay: Sequence[Pair], out_dir: Path,
                held_out_documents: Sequence[str], config: TrainConfig = CONFIG,
                extra_metadata: dict | None = None) -> dict:
    import torch

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    train_claims = [p for p in claims if p.group not in held_out_documents]
    held_out = [p for p in claims if p.group in held_out_documents]
    sentences = [p for p in replay if p.kind == "sentence" and p.group not in held_out_documents]
    pairs = train_claims + rng.sample(sentences, min(len(train_claims), len(sentences)))
    encoder, _ = load_compact(base, config.max_length)
    model, tokenizer = encoder.model, encoder.tokenizer
    for parameter in model.bert.embeddings.parameters():
        parameter.requires_grad = False
    before = evaluate(model, tokenizer, held_out, config.max_length) if held_out else {}
    started = time.monotonic()
    fit(model, tokenizer, pairs, config, stage="claims")
    after = evaluate(model, tokenizer, held_out, config.max_length) if held_out else {}
    save_delta(model, out_dir)
    metadata = json.loads((base / METADATA_FILE).read_text())
    metadata.pop("thresholds", None)  # chosen for the base model: record them again for this one
    metadata["claims"] = {"config": asdict(config), "pairs": len(pairs), "pairs_sha256": pairs_sha256(pairs),
                          "claims_pairs": len(train_claims), "held_out_pairs": len(held_out),
                          "held_out_before": before, "held_out_after": after,
                          "seconds": round(time.monotonic() - started, 1), **(extra_metadata or {})}
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return metadata
