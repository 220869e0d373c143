"""The question flow called in-process: the same stage functions the agents run, in the same order.

Used by `eval --through inprocess` and the benchmark's baseline; the stream
path must give the same answers.
"""

from __future__ import annotations

from .assembly import assemble
from .filtering import filter_facts
from .generation import generate
from .models import QuestionEvent, ValidatedAnswer
from .retrieval import retrieve
from .streams.deps import Deps
from .validation import validate


def answer_inprocess(question: QuestionEvent, deps: Deps) -> ValidatedAnswer:
    facts = retrieve(question, deps.search, deps.chunks.index_version(), deps.embedder, deps.policy, deps.relevance)
    relevant = filter_facts(facts, deps.policy)
    prompt = assemble(relevant, deps.policy, deps.tokens.count, deps.tokens.name, deps.embedder.name)
    generation = generate(prompt, deps.llm, deps.ledger, deps.settings.llm_max_attempts)
    return validate(generation, deps.policy, deps.relevance)
