"""The sentence vectors ingest keeps (``keep``, in ``ChunkStore.replace_document``'s transaction) and the relevance
model's blend reads (``SentenceVectors.fetch``) before it embeds any candidate sentence. A row's key: the embedding
model and the SHA-256 of the text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import Connection, Engine, select
from sqlalchemy.dialects.postgresql import insert

from ..core.hashing import sha256_hex
from ..embedding import MODEL_NAME as EMBEDDING_MODEL
from .tables import sentence_vectors


def keep(conn: Connection, vectors: dict[str, np.ndarray]) -> None:
    """Add the vectors (by text) the table lacks; in key order, so two writers never wait on each other in turn."""
    by_key = {sha256_hex(t): v for t, v in vectors.items()}
    if by_key:
        conn.execute(insert(sentence_vectors).on_conflict_do_nothing(), [
            {"model": EMBEDDING_MODEL, "text_sha256": key, "embedding": by_key[key]} for key in sorted(by_key)])


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
