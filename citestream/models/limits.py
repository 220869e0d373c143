"""Size bounds of the record contracts: every field a publisher can fill has one.

A record that exceeds a bound breaks its contract (``SCHEMA_VIOLATION``), so
nothing unbounded reaches a stage, and no stage can derive a record too large
for the broker from a valid one. The byte caps of whole records live in the
topic registry (``TopicSpec.max_bytes``); these are the field-level ones.
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import BeforeValidator

from ..core.strict_json import MAX_JSON_DEPTH  # noqa: F401  (nesting of a record's JSON: the decoder's bound)

MAX_TEXT_CHARS = 200_000
"""Default bound of every string in every record (prompts and model replies are far below it)."""
MAX_TRACE_STAGES = 32
"""Stage timings a record may carry (the question flow adds five)."""
MAX_INPUT_TRACE_STAGES = 8
"""Stage timings a publisher may put on an input record, so the stages after it still fit."""
MAX_NAME_CHARS = 128
"""Versions, stage names, model names and other identifiers."""
MAX_INLINE_DOCUMENTS = 100
MAX_INLINE_BYTES = 800 * 1024
"""UTF-8 bytes of all inline documents of one ingest request together (the topic takes 900 kB)."""
MAX_DOCUMENT_CHARS = 800_000
MAX_PATHS = 100
MAX_PATH_CHARS = 4096
MAX_METADATA_ENTRIES = 32
MAX_CLAIMS = 200
MAX_CLAIM_CHARS = 4000
MAX_CONSTRAINTS = 200
MAX_DOCUMENT_LEAF_CHARS = MAX_CLAIM_CHARS
"""Each string of a compliance document (the evaluator's patterns read them one by one)."""
MAX_DOCUMENT_KEY_CHARS = MAX_NAME_CHARS
"""Each key of a compliance document (they become the report's JSONPath pointers)."""
MAX_DOCUMENT_LEAVES = 500
"""Strings of one compliance document: each is compared with every constraint, a challenging question by the
embedding model (500 short ones and 200 constraints: 5.4 s of CPU here, 2,000: 18 s)."""
MAX_QUERY_CHARS = 2000
MAX_ID_CHARS = 512
"""A chunk's or a document's id (an inline docId is at most 200 characters, its chunks' ids a few more)."""
MAX_EVIDENCE_CHARS = 20_000
"""A passage a publisher hands the verifier (``claims.verify``'s grounding): ingest's chunks are a few thousand."""
MAX_EVIDENCE_CHUNKS = 100
"""Passages of one grounding pack: ``topK`` is at most 100."""
MAX_CARRIED_SCORES = 4096
"""Sentence scores a question record carries (its facts' sentence readings: a few hundred)."""


def clamp_int(low: int, high: int) -> BeforeValidator:
    """A ``BeforeValidator`` that reads an integer the way ``int()`` would (``8``, ``"8"``, ``8.0``) and clamps it.

    Every number a publisher sends goes through the same rule, whatever its JSON
    type: ``"-5"`` is ``-5`` and clamps to ``low`` like ``-5`` does; booleans,
    fractions and text that is not an integer are rejected.
    """

    def read(value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("must be an integer, not a boolean")
        if isinstance(value, str):
            text = value.strip()
            if not text.lstrip("+-").isdigit() or len(text) > 20:
                raise ValueError("must be an integer")
            value = int(text)
        elif isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise ValueError("must be a whole number")
            value = int(value)
        if not isinstance(value, int):
            raise ValueError("must be an integer")
        return min(high, max(low, value))

    return BeforeValidator(read)


TopK = Annotated[int, clamp_int(1, 100)]
"""``top_k`` of a question or a claim request: any integer, clamped to [1, 100]."""
