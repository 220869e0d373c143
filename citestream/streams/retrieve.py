"""questions → retrieve (Phase A: facts with scores, never an answer) → qa.facts"""

from ..models import FactsRecord, QuestionEvent
from ..retrieval import retrieve
from .app import stage_agent
from .deps import Deps


@stage_agent("retrieve", source="questions", sink="qa.facts", state_of=lambda _: "retrieved")
def retrieve_facts(question: QuestionEvent, deps: Deps) -> FactsRecord:
    deps.tracker.mark(question.request_id, "received", question=question.question, scope=question.scope)
    return retrieve(question, deps.search, deps.chunks.index_version(), deps.embedder, deps.policy, deps.relevance)
