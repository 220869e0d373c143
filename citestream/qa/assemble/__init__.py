"""R2 answer assembly: retrieval_bundle → AnswerBundle → frozen prompt (answer-assembly-contract R2.0–R2.6).

``assembly`` (the stage: ``assemble``, ``assemble_bundle``), ``selection`` (R2.2) and ``prompt`` (the template).
"""

from ...core.sanitize import sanitize
from ...models.evidence import render_evidence
from .assembly import assemble, assemble_bundle, bundle_from_facts, make_trace, validate_input
from .selection import overlap_ratio, select, truncate_to_tokens

__all__ = ["assemble", "assemble_bundle", "bundle_from_facts", "make_trace", "overlap_ratio", "render_evidence",
           "sanitize", "select", "truncate_to_tokens", "validate_input"]
