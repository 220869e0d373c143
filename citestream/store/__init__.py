"""Postgres + pgvector: documents, chunks, the audit ledger and request tracking."""

from .chunks import ChunkRow, ChunkStore, DocumentRow
from .db import engine_for, make_engine
from .ledger import Ledger, LedgerEntry
from .requests import RequestTracker
from .search import ChunkHit, ChunkSearch
from .sentence_vectors import SentenceVectors

__all__ = ["ChunkHit", "ChunkRow", "ChunkSearch", "ChunkStore", "DocumentRow", "Ledger", "LedgerEntry",
           "RequestTracker", "SentenceVectors", "engine_for", "make_engine"]
