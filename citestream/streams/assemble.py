"""qa.relevant → assemble (R2: AnswerBundle and the frozen prompt) → qa.prompts"""

from ..assembly import assemble
from ..models import PromptRecord, RelevantFactsRecord
from ..provenance import ASSEMBLE, evidence_digest
from .app import stage_agent
from .deps import Deps


@stage_agent("assemble", source="qa.relevant", sink="qa.prompts", state_of=lambda _: "assembled")
def assemble_prompt(relevant: RelevantFactsRecord, deps: Deps) -> PromptRecord:
    record = assemble(relevant, deps.policy, deps.tokens.count, deps.tokens.name, deps.embedder.name)
    deps.provenance.record(record.request_id, ASSEMBLE, evidence_digest(record))  # before it is published
    return record
