"""Reads the sentence vectors ingest keeps (``ChunkStore.replace_document``): the relevance model's blend asks
for a question's candidate sentences here before it embeds any of them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import Engine, select

from ..core.hashing import sha256_hex
from ..embedding import MODEL_NAME as EMBEDDING_MODEL
from .tables import sentence_vectors


class SentenceVectors:
    def __init__(self, engine: Engine):
        self.engine = engine

    def fetch(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``texts`` (those ingest has seen), by text; one statement."""
        by_key = {sha256_hex(t): t for t in texts}
        if not by_key:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(select(sentence_vectors.c.text_sha256, sentence_vectors.c.embedding).where(
                sentence_vectors.c.model == EMBEDDING_MODEL, sentence_vectors.c.text_sha256.in_(list(by_key))))
            return {by_key[key]: np.asarray(vector, dtype=np.float32) for key, vector in rows}
