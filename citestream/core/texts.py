"""The fixed texts of the contracts."""

from __future__ import annotations

REFUSAL_TEXT = "Not found in provided PDFs"
"""The user-facing refusal of qa-contract-v1 (the prompt's own lock is ``PROMPT_REFUSAL_LOCK``)."""

PROMPT_REFUSAL_LOCK = (
    "NO_EVIDENCE: The provided evidence does not contain sufficient information to answer this question."
)
"""What PROMPT_V1 tells the model to write when the evidence does not answer."""
