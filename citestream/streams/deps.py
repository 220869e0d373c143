"""What stage functions need, built once per worker process and shared by every agent."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..config import Settings, get_settings
from ..policy import Policy, RelevancePolicy, RetrievalPolicy


def policy_from_settings(settings: Settings) -> Policy:
    """The policy with what the settings override: the relevance thresholds (a different relevance model needs its
    own) and the lexical ranker."""
    overrides = {name: value for name, value in (("backstop", settings.relevance_backstop),
                                                 ("fact_floor", settings.relevance_fact_floor),
                                                 ("answer_threshold", settings.relevance_answer_threshold))
                 if value is not None}
    retrieval = RetrievalPolicy(**({"lexical_ranker": settings.lexical_ranker} if settings.lexical_ranker else {}))
    return Policy(version=settings.policy_version, retrieval=retrieval, relevance=RelevancePolicy(**overrides))


@dataclass
class Deps:
    settings: Settings

    @cached_property
    def policy(self) -> Policy:
        return policy_from_settings(self.settings)

    @cached_property
    def engine(self):
        from ..store import engine_for

        return engine_for(self.settings.app_dsn)

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
    def provenance(self):
        from ..store.provenance import ProvenanceStore

        return ProvenanceStore(self.engine)

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
    def relevance(self):
        from ..relevance import get_relevance_model

        return get_relevance_model(self.settings.reranker_model)

    @cached_property
    def llm(self):
        from ..llm import backend_from_settings

        return backend_from_settings(self.settings, self.relevance, self.policy.relevance)

    def warm(self) -> None:
        """Load the slow parts (model weights, tokenizer, pool) before the first record arrives."""
        _ = self.embedder, self.tokens, self.relevance, self.llm, self.chunks.index_version()


def wait_for_servers(settings: Settings, log) -> None:
    """Block until the broker accepts connections and Postgres answers, saying clearly what is awaited.

    A worker started before its servers (a fresh deployment, a broker restart)
    waits instead of crashing; ``startup_wait_s`` > 0 bounds the wait.
    """
    import socket
    import time

    from sqlalchemy import text

    started = time.monotonic()

    def waited_too_long(what: str) -> None:
        if settings.startup_wait_s and time.monotonic() - started > settings.startup_wait_s:
            raise SystemExit(f"gave up waiting for {what} after {settings.startup_wait_s:.0f}s")

    hosts = [h.rsplit(":", 1) for h in settings.bootstrap_servers.split(",")]
    attempt = 0
    while True:
        reachable = []
        for host, port in hosts:
            with socket.socket() as s:
                s.settimeout(1.0)
                reachable.append(s.connect_ex((host, int(port))) == 0)
        if any(reachable):
            break
        attempt += 1
        if attempt == 1 or attempt % 10 == 0:
            log.warning("waiting for the Kafka broker at %s (not reachable yet, attempt %d); "
                        "the worker starts when it appears", settings.bootstrap_servers, attempt)
        waited_too_long("the broker")
        time.sleep(1.0)
    if attempt:
        log.warning("Kafka broker at %s is up after %.0fs; starting", settings.bootstrap_servers,
                    time.monotonic() - started)
    from ..store import engine_for

    attempt = 0
    while True:
        try:
            with engine_for(settings.app_dsn).connect() as conn:
                conn.execute(text("SELECT 1"))
            break
        except Exception as exc:  # OperationalError and friends while Postgres starts
            attempt += 1
            if attempt == 1 or attempt % 10 == 0:
                log.warning("waiting for Postgres (%s, attempt %d): %s", settings.database_url.split("@")[-1],
                            attempt, str(exc).splitlines()[0])
            waited_too_long("Postgres")
            time.sleep(1.0)


_DEPS: Deps | None = None


def get_deps() -> Deps:
    global _DEPS
    if _DEPS is None:
        _DEPS = Deps(get_settings())
    return _DEPS
