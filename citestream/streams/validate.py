"""qa.generations → validate (R5 + Phase C: cited and grounded, or the exact refusal) → answers"""

from ..models import GenerationRecord, ValidatedAnswer
from ..validation import validate
from .app import stage_agent
from .deps import Deps


@stage_agent("validate", source="qa.generations", sink="answers", state_of=lambda answer: answer.status)
def validate_answer(generation: GenerationRecord, deps: Deps) -> ValidatedAnswer:
    return validate(generation, deps.policy, deps.relevance)
