"""Post-generation validation: Phase C ``_validate_synthesis`` then R5; any failure is the exact refusal.

Order of work for one model reply:

1. the exact prompt refusal lock → a refusal that PASSED (a near-miss when the
   evidence was related: the closest source sentence is quoted as explanation);
2. strict JSON (duplicate object keys are malformed too);
3. Phase C (qa-contract-v1): ``answer_sentences`` must be a list; rows need a
   str ``sentence``, str ``pdf``, int ``page``, str ``chunk_id``; the key
   ``(pdf, page, chunk_id)`` must be one of the selected facts; duplicate keys
   and rows past the sixth are dropped (and recorded); no row left → refusal;
4. R5 on every accepted row, each failure failing the whole answer closed
   (``validation_status = FAILED``, ``failure_reason = "CODE: detail"``):
   citation markers ``[C\\d+]`` only, from the allowed anchor set, the row's own
   anchor among them; every sentence inside the row cited; no chunk or
   knowledge ids; no prompt-injection echo; no meta commentary; grounded in
   the row's own chunk (see :func:`grounding`);
5. answerability (R5, qa-v2): every row must be judged by the relevance model to answer the question; a row
   that does not is dropped (``NOT_ANSWERING``, with its score) and with none left the answer is the refusal,
   quoting the closest source sentence as the related clause. A verbatim sentence is grounded, not necessarily
   an answer: this holds for every backend.

One module per job: ``synthesis`` (Phase C, strict JSON, ``ValidationFailure``), ``rows`` (R5 on one row),
``grounding_check`` (the grounding rule), ``answerability`` (the relevance model's reading, the near miss),
``answer_text`` (the output text and its classification), ``stage`` (``validate``: the order above), ``provenance``
(the evidence digest a generation must match). Its refusals are decided in ``citestream.refusals``.
"""

from .answer_text import classify, render_answer
from ...refusals import near_miss_detail
from .answerability import related_clause, row_readings
from .grounding_check import (
    GROUNDING_MIN_SUPPORT, GROUNDING_WINDOW_SENTENCES, NEGATION_REACH, Grounding, answer_sentences, grounding,
)
from .rows import CITATION, check_row
from .stage import validate
from .synthesis import (
    CONFIDENCE_LEVELS, MAX_SENTENCES, Synthesis, ValidationFailure, normalize_confidence, reply_payload,
    validate_synthesis,
)

__all__ = ["CITATION", "CONFIDENCE_LEVELS", "GROUNDING_MIN_SUPPORT", "GROUNDING_WINDOW_SENTENCES", "MAX_SENTENCES",
           "NEGATION_REACH", "Grounding", "Synthesis", "ValidationFailure", "answer_sentences", "check_row",
           "classify", "grounding", "near_miss_detail", "normalize_confidence", "related_clause", "render_answer",
           "reply_payload", "row_readings", "validate", "validate_synthesis"]
