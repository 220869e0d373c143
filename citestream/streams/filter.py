"""qa.facts → filter (Phase B: keep the relevant facts) → qa.relevant; a rejected LLM reply → qa.deadletter

The agent is the shared ``stage_agent`` adapter (decode, retry, emit,
dead-letter bad input) unchanged. The one extra step, dead-lettering an LLM
reply that broke the Phase B contract while the question goes on with the
local filter, is done here: the stage runs in a worker thread, so it hands
the dead letter to the app's event loop and waits until it is sent, which
puts the dead letter on its topic before the question's record moves on.
"""

from __future__ import annotations

import asyncio
import base64

from ..filtering import run_filter
from ..models import DeadLetter, FactsRecord, RelevantFactsRecord
from .app import app, deadletter_topic, stage_agent
from .deps import Deps

SEND_TIMEOUT_S = 30.0


@stage_agent("filter", source="qa.facts", sink="qa.relevant", state_of=lambda _: "filtered")
def filter_relevant(facts: FactsRecord, deps: Deps) -> RelevantFactsRecord:
    llm = deps.llm if deps.settings.filter_mode == "llm" else None
    outcome = run_filter(facts, deps.policy, llm, deps.settings.llm_max_attempts)
    if outcome.rejected_reply is not None:
        dead_letter_reply(facts, outcome.rejected_reply, outcome.record.filter_fallback_reason or "")
    return outcome.record


def dead_letter_reply(facts: FactsRecord, reply: str, reason: str) -> None:
    """LLM_REPLY_INVALID: the model's raw reply as the payload, the question's key, the validator's reason."""
    letter = DeadLetter(
        request_id=facts.request_id, policy_version=facts.policy_version, index_version=facts.index_version,
        stage="filter", source_topic="qa.facts", reason_code="LLM_REPLY_INVALID", reason=reason[:2000],
        original_key_b64=base64.b64encode(facts.request_id.encode()).decode(),
        original_value_b64=base64.b64encode(reply.encode("utf-8", "replace")).decode(),
    )
    send = deadletter_topic.send(key=letter.request_id.encode(), value=letter.model_dump_json().encode())
    asyncio.run_coroutine_threadsafe(send, app.loop).result(timeout=SEND_TIMEOUT_S)
