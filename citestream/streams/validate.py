"""qa.generations → validate (R5 + Phase C: cited and grounded, or the exact refusal) → answers

A generation the pipeline did not produce (see ``provenance``) is dead-lettered
as ``PROVENANCE_MISMATCH`` before its evidence is trusted.
"""

from ..models import GenerationRecord, ValidatedAnswer
from ..provenance import generation_problem
from ..validation import validate
from .app import RecordRejected, stage_agent
from .deps import Deps


@stage_agent("validate", source="qa.generations", sink="answers", state_of=lambda answer: answer.status)
def validate_answer(generation: GenerationRecord, deps: Deps) -> ValidatedAnswer:
    problem = generation_problem(generation, deps.provenance, deps.ledger)
    if problem:
        raise RecordRejected("PROVENANCE_MISMATCH", problem)
    return validate(generation, deps.policy, deps.relevance)
