"""The sentence vectors ingest keeps (``keep``, in ``ChunkStore.replace_document``'s transaction) and the relevance
model's blend reads (``SentenceVectors.fetch``) before it embeds any candidate sentence. A row's key: the embedding
model (the relevance embedder's name and weights' hash, so a retrained model never reads another's vectors) and the
SHA-256 of the text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import Connection, Engine
from sqlalchemy.dialects.postgresql import insert

from ..core.hashing import sha256_hex
from ..embedding import relevance_embedder_name
from .db import any_of, as_array, driver_rows, joined, single_statements
from .tables import sentence_vectors


def keep(conn: Connection, vectors: dict[str, np.ndarray]) -> None:
    """Add the vectors (by text) the table lacks; in key order, so two writers never wait on each other in turn."""
    by_key = {sha256_hex(t): v for t, v in vectors.items()}
    if by_key:
        model = relevance_embedder_name()
        conn.execute(insert(sentence_vectors).on_conflict_do_nothing(), [
            {"model": model, "text_sha256": key, "embedding": by_key[key]} for key in sorted(by_key)])


class SentenceVectors:
    def __init__(self, engine: Engine):
        self.engine = single_statements(engine)  # ``fetch`` is one statement

    def fetch(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``texts`` (those ingest has seen), by text; one statement."""
        by_key = {sha256_hex(t): t for t in texts}
        if not by_key:
            return {}
        with self.engine.connect() as conn:
            rows = driver_rows(conn, f"SELECT text_sha256, embedding FROM {sentence_vectors.name} "
                                     f"WHERE model = %(model)s AND {any_of('text_sha256', 'keys')}",
                               {"model": relevance_embedder_name(), "keys": joined(list(by_key))}, binary=True)
            return {by_key[r.text_sha256]: as_array(r.embedding) for r in rows}
