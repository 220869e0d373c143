"""What stage functions need, built once per worker process and shared by every agent."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..config import Settings, get_settings
from ..policy import Policy


@dataclass
class Deps:
    settings: Settings

    @cached_property
    def policy(self) -> Policy:
        return Policy(version=self.settings.policy_version)

    @cached_property
    def engine(self):
        from ..store import engine_for

        return engine_for(self.settings.database_url)

    @cached_property
    def chunks(self):
        from ..store import ChunkStore

        return ChunkStore(self.engine)

    @cached_property
    def search(self):
        from ..store import ChunkSearch

        return ChunkSearch(self.engine)

    @cached_property
    def ledger(self):
        from ..store import Ledger

        return Ledger(self.engine)

    @cached_property
    def tracker(self):
        from ..store import RequestTracker

        return RequestTracker(self.engine)

    @cached_property
    def embedder(self):
        from ..embedding import get_embedder

        return get_embedder()

    @cached_property
    def tokens(self):
        from ..embedding import get_token_counter

        return get_token_counter()

    @cached_property
    def llm(self):
        from ..llm import backend_from_settings

        return backend_from_settings(self.settings)

    def warm(self) -> None:
        """Load the slow parts (model weights, tokenizer, pool) before the first record arrives."""
        _ = self.embedder, self.tokens, self.llm, self.chunks.index_version()


_DEPS: Deps | None = None


def get_deps() -> Deps:
    global _DEPS
    if _DEPS is None:
        _DEPS = Deps(get_settings())
    return _DEPS
