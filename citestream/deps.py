"""What stage functions need, built once per worker process and shared by every agent."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from .config import Settings, get_settings
from .models import DeadLetter
from .core.policy import Policy, RelevancePolicy, RetrievalPolicy

log = logging.getLogger("citestream.deps")


def policy_from_settings(settings: Settings) -> Policy:
    """The policy with what the settings override: the relevance thresholds (a different relevance model needs its
    own) and the lexical ranker."""
    overrides: dict[str, Any] = {name: value for name, value in (("backstop", settings.relevance_backstop),
                                                 ("fact_floor", settings.relevance_fact_floor),
                                                 ("answer_threshold", settings.relevance_answer_threshold))
                 if value is not None}
    ranker: dict[str, Any] = {"lexical_ranker": settings.lexical_ranker} if settings.lexical_ranker else {}
    retrieval = RetrievalPolicy(**ranker)
    return Policy(version=settings.policy_version, retrieval=retrieval, relevance=RelevancePolicy(**overrides))


@dataclass
class Deps:
    settings: Settings
    publish_dead_letter: Callable[[DeadLetter], None] | None = None
    """Where a stage's side dead letter goes (the stream app sets the ``qa.deadletter`` sender); else logged."""

    def dead_letter(self, letter: DeadLetter) -> None:
        """A record a stage refused beside its output (a model reply that broke a contract): never dropped silently."""
        if self.publish_dead_letter is not None:
            self.publish_dead_letter(letter)
        else:
            log.warning("dead-letter stage=%s code=%s request_id=%s: %s", letter.stage, letter.reason_code,
                        letter.request_id, letter.reason[:200])

    @cached_property
    def policy(self) -> Policy:
        return policy_from_settings(self.settings)

    def without_backstop(self) -> Deps:
        """These deps with the hard backstop off: what retrieve finds before the gate holds it back (the threshold
        sweep applies each combination's backstop afterwards; the miss table asks whether a gate hid the answer)."""
        return self.with_policy(replace(self.policy, relevance=replace(self.policy.relevance, backstop=0.0)))

    def with_policy(self, policy: Policy) -> Deps:
        """This process's loaded parts under another policy (the threshold sweep): models, stores and the question
        reader are shared, loaded first so no copy loads its own; the LLM backend, which reads the policy, is made
        anew."""
        self.warm()
        other = copy.copy(self)
        other.__dict__["policy"] = policy
        del other.__dict__["llm"]
        return other

    @cached_property
    def sealer(self):
        """Seals what this process writes to a topic and checks what it reads (``sealing``); makes the key when
        missing."""
        from .sealing import RecordSealer

        return RecordSealer.from_file(self.settings.record_key_path, create=True)

    @cached_property
    def engine(self):
        from .store import engine_for

        return engine_for(self.settings.app_dsn)

    @cached_property
    def chunks(self):
        from .store import ChunkStore

        return ChunkStore(self.engine)

    @cached_property
    def search(self):
        from .store import ChunkSearch

        return ChunkSearch(self.engine)

    @cached_property
    def ledger(self):
        from .store import Ledger

        return Ledger(self.engine)

    @cached_property
    def provenance(self):
        from .store.emissions import ProvenanceStore

        return ProvenanceStore(self.engine)

    @cached_property
    def tracker(self):
        from .store import RequestTracker

        return RequestTracker(self.engine)

    @cached_property
    def embedder(self):
        from .embedding import get_embedder

        return get_embedder()

    @cached_property
    def tokens(self):
        from .embedding import get_token_counter

        return get_token_counter()

    @cached_property
    def relevance(self):
        """The question judge; with the background judge on, the two behind one face (``relevance.routed``)."""
        from .qa.retrieve.reading import has_background
        from .relevance import background_judge_spec
        from .relevance.routed import BackgroundRouted

        if background_judge_spec(self.settings) is None:
            return self.question_judge
        return BackgroundRouted(self.question_judge, self._relevance_model(background=True), has_background)

    @cached_property
    def question_judge(self):
        return self._relevance_model()

    @cached_property
    def claim_relevance(self):
        """The claim judge (claims, premises, the pack that grounds them, and the second opinion behind High): the
        cross-encoder ``CITESTREAM_VERIFY_RERANKER_MODEL`` and the blend ``CITESTREAM_VERIFY_EMBEDDING_WEIGHT``
        name; the question judge's model itself when both name the same (one score cache, one runtime)."""
        from .relevance import ClaimRelevance, judge_spec

        if judge_spec(self.settings, claims=True) == judge_spec(self.settings):
            return ClaimRelevance(self.question_judge)
        return ClaimRelevance(self._relevance_model(claims=True))

    def _relevance_model(self, claims: bool = False, background: bool = False):
        """The settings' question judge, claim judge or background judge, reading the sentence vectors ingest
        stored."""
        from .relevance import relevance_model_for
        from .store import SentenceVectors

        model = relevance_model_for(self.settings, claims, background)
        model.read_stored_vectors(SentenceVectors(self.engine).fetch)
        return model

    @cached_property
    def reader(self):
        """How questions are read (typos, acronyms, the asking sentence): retrieve and the extractive backend share
        one, so both score the same reading."""
        from .qa.retrieve import QuestionReader

        from .relevance import background_judge_spec

        return QuestionReader(self.search, self.policy.retrieval.corpus_variant,
                              with_background=background_judge_spec(self.settings) is not None)

    @cached_property
    def llm(self):
        from .llm import backend_from_settings

        return backend_from_settings(self.settings, self.relevance, self.policy.relevance,
                                     self.reader.read)

    def warm(self) -> None:
        """Load the slow parts (model weights, tokenizer, pool) before the first record arrives."""
        from .qa.retrieve import warm as warm_retrieval

        _ = self.sealer, self.embedder, self.tokens, self.relevance, self.claim_relevance, self.llm
        self.chunks.index_version()
        warm_retrieval(self.search, self.policy.retrieval)
        self.warm_passes()

    def warm_passes(self) -> None:
        """One pass of every model a question reaches, before the first question: the judge's int8 graph is built or
        verified here (seconds when the weights are new), the corpus lexicon the reading needs is read, and each
        runtime's first-call allocations are paid. Without it a fresh worker's first answer took 11 s (issue 53). The
        dependency parser the premise and claim checks read is loaded too: its import and load held the GIL for ~1 s
        inside the first questions that reached it (py-spy, 2026-11-30). So is the WordNet table the word checks read
        for synonyms."""
        from .core.clauses import clauses
        from .verification.synonyms import synonymous

        question = "How many days does the agency have to decide whether to file an application?"
        texts = ["The agency has 60 days after it receives an application to decide whether to file it."]
        try:
            self.reader.read(question)
            self.embedder.embed([question])
            self.relevance.score(question, texts)
            self.relevance.score(f"Our firm has filed one. {question}", texts)  # the background judge, when on
            self.claim_relevance.score(question, texts)
            clauses(texts[0])
            synonymous("decide", "determine")
        except Exception as exc:  # noqa: BLE001 - a warm-up: the first question pays instead
            log.warning("warm-up pass failed (%s: %s); the first question loads what it needs", type(exc).__name__,
                        exc)


_DEPS: Deps | None = None


def get_deps() -> Deps:
    global _DEPS
    if _DEPS is None:
        _DEPS = Deps(get_settings())
    return _DEPS
