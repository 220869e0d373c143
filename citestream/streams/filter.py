"""qa.facts → filter (Phase B: keep the relevant facts) → qa.relevant"""

from ..filtering import filter_facts
from ..models import FactsRecord, RelevantFactsRecord
from .app import stage_agent
from .deps import Deps


@stage_agent("filter", source="qa.facts", sink="qa.relevant", state_of=lambda _: "filtered")
def filter_relevant(facts: FactsRecord, deps: Deps) -> RelevantFactsRecord:
    return filter_facts(facts, deps.policy)
