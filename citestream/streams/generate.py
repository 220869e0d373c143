"""qa.prompts → generate (R3: exact prompt bytes to the model, one ledger row) → qa.generations"""

from ..generation import generate
from ..models import GenerationRecord, PromptRecord
from .app import stage_agent
from .deps import Deps


@stage_agent("generate", source="qa.prompts", sink="qa.generations", state_of=lambda _: "generated")
def generate_answer(prompt: PromptRecord, deps: Deps) -> GenerationRecord:
    return generate(prompt, deps.llm, deps.ledger, deps.settings.llm_max_attempts)
