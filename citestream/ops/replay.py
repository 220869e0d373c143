"""Ledger replay (generation-execution-contract R3): rebuild each prompt a request sent from its ledger row.

Beside generation, not in ``store``: replay needs the prompt builder and the evidence format, which the store
layer does not know.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.hashing import sha256_hex
from ..models.evidence import render_evidence
from ..models.assembly import AnswerBundle
from ..qa.assemble.prompt import TEMPLATE_VERSION, render_prompt, template_sha256
from ..store import Ledger


@dataclass(frozen=True)
class ReplayResult:
    """One ledger row replayed: the prompt rebuilt from the stored bundle and its SHA-256 compared."""

    row_id: int
    request_id: str
    stage: str
    model: str
    stored_sha256: str
    rebuilt_sha256: str | None
    ok: bool
    reason: str | None = None


def replay_row(row: dict) -> ReplayResult:
    """Rebuild the exact prompt bytes from the row's payload with the prompt builder; compare hashes.

    Checks, in order: the payload has what replay needs; the template version
    (and, when recorded, the template file's hash) is the one this code has;
    the stored evidence_block_text is what the stored selected evidence
    renders to; the rebuilt prompt's SHA-256 equals the stored prompt_sha256.
    """
    def result(ok: bool, rebuilt: str | None = None, reason: str | None = None) -> ReplayResult:
        return ReplayResult(row["id"], row["request_id"], row["stage"], row["model"], row["prompt_sha256"], rebuilt,
                            ok, reason)

    payload = row["payload"] or {}
    missing = [k for k in ("answer_bundle", "question", "template_version") if k not in payload]
    if missing:
        return result(False, reason=f"payload lacks {', '.join(missing)}")
    if payload["template_version"] != TEMPLATE_VERSION:
        return result(False, reason=f"template {payload['template_version']} is not this code's {TEMPLATE_VERSION}")
    if payload.get("template_sha256") not in (None, template_sha256()):
        return result(False, reason="the prompt template file changed since this row was written")
    try:
        bundle = AnswerBundle.model_validate(payload["answer_bundle"])
    except ValueError as exc:
        return result(False, reason=f"stored answer_bundle is invalid: {exc}")
    if render_evidence(bundle.selected_evidence) != bundle.evidence_block_text:
        return result(False, reason="evidence_block_text does not match the stored selected evidence")
    rebuilt = sha256_hex(render_prompt(bundle.evidence_block_text, payload["question"]))
    if rebuilt != row["prompt_sha256"]:
        return result(False, rebuilt, "rebuilt prompt differs from the prompt that was sent")
    return result(True, rebuilt)


def replay(ledger: Ledger, request_id: str) -> list[ReplayResult]:
    """Every ledger row of ``request_id``, replayed (empty when the request never reached a model)."""
    return [replay_row(row) for row in ledger.entries_for(request_id)]
