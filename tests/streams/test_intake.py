"""What a raw record passes before a stage sees it, in process: every refusal has a code, every dead letter fits."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from citestream.models import DeadLetter, QuestionEvent
from citestream.models.limits import MAX_JSON_DEPTH
from citestream.core.scrub import exception_reason, scrub
from citestream.streams.intake import RecordRejected, check_size, dead_letter_record, decode_json, parse
from citestream.topics import REGISTRY


def _code(fn, *args) -> str:
    with pytest.raises(RecordRejected) as caught:
        fn(*args)
    return caught.value.code


def test_oversized_values_are_refused_before_decoding():
    assert _code(check_size, b"x" * (900 * 1024), REGISTRY["questions"].max_bytes, "questions") == "RECORD_TOO_LARGE"
    assert check_size(None, 10, "questions") == b""


@pytest.mark.parametrize("value, code", [
    (b"\xff\xfe\x00\xc3\x28", "DECODE_ERROR"),
    (b'{"request_id": "r", "question": ', "DECODE_ERROR"),
    (b'{"a": NaN}', "DECODE_ERROR"),
    (b'{"request_id": "r", "n": 1e999}', "DECODE_ERROR"),  # infinity: no JSON writer takes it back (review 54c, C1)
    (b'{"n": -1E400}', "DECODE_ERROR"),
    (b'{"question": "a", "question": "b"}', "DECODE_ERROR"),
    (b"[" * 100_000 + b"]" * 100_000, "NESTING_TOO_DEEP"),
    (json.dumps({"document": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}).encode(),
     "NESTING_TOO_DEEP"),
])
def test_decoding_refusals_have_their_codes(value, code):
    assert _code(decode_json, value) == code


def test_nesting_at_the_limit_is_fine():
    data = []
    for _ in range(MAX_JSON_DEPTH - 1):
        data = [data]
    assert decode_json(json.dumps(data).encode()) == data


@pytest.mark.parametrize("fields", [
    {"top_k": "abc"}, {"top_k": True}, {"top_k": 2.5}, {"scope": "MOON"}, {"question": "x" * 2001},
    {"question": "What\u202e does lecanemab target?"}, {"question": "What\u0085 does it target?"},
    {"trace": [{"stage": "x", "started_at": "2026-01-01T00:00:00Z", "elapsed_ms": 1}] * 9},
    {"policy_version": "p" * 200}, {"extra": 1},
])
def test_contract_breaks_are_schema_violations(fields):
    data = {"request_id": "r-1", "question": "What does lecanemab target?", **fields}
    assert _code(parse, QuestionEvent, data) == "SCHEMA_VIOLATION"


@pytest.mark.parametrize("given, expected", [("-5", 1), (-5, 1), ("8", 8), (8.0, 8), ("250", 100), (" 3 ", 3)])
def test_top_k_coerces_like_int_then_clamps(given, expected):
    assert parse(QuestionEvent, {"request_id": "r", "question": "q?", "top_k": given}).top_k == expected


def test_schema_violation_reasons_name_fields_not_values():
    secret = "my confidential question text"
    with pytest.raises(RecordRejected) as caught:
        parse(QuestionEvent, {"request_id": "r", "question": secret * 200, "colour\x1b[2J" * 30: secret})
    assert secret not in caught.value.reason and "\x1b" not in caught.value.reason
    assert "question" in caught.value.reason and len(caught.value.reason) <= 1000


def test_a_dead_letter_of_a_900kB_value_fits_and_describes_the_original():
    value = b'{"request_id": "big", "question": "' + b"x" * (900 * 1024) + b'"}'
    letter = dead_letter_record(stage="retrieve", source="questions", key=b"big", value=value, code="RECORD_TOO_LARGE",
                                reason="too large", partition=0, offset=7, request_id=None, policy_version="p")
    assert letter.request_id == "big" and letter.original_truncated
    assert letter.original_length == len(value) and letter.original_sha256 == hashlib.sha256(value).hexdigest()
    assert value.startswith(base64.b64decode(letter.original_value_b64))
    assert len(letter.model_dump_json()) < 100 * 1024
    DeadLetter.model_validate_json(letter.model_dump_json())


def test_a_hostile_key_does_not_break_its_dead_letter():
    letter = dead_letter_record(stage="retrieve", source="questions", key=b"\xff" * 5000, value=b"x",
                                code="DECODE_ERROR", reason="r", partition=2, offset=9, request_id="bad id/..",
                                policy_version=None)
    assert letter.request_id == "unknown-questions-2-9" and len(base64.b64decode(letter.original_key_b64)) == 1024
    assert not letter.original_truncated and base64.b64decode(letter.original_value_b64) == b"x"


def test_reasons_are_scrubbed_of_credentials_sql_and_control_characters():
    from sqlalchemy.exc import IntegrityError

    exc = IntegrityError("INSERT INTO requests (question) VALUES (%(q)s)", {"q": "the user's question"},
                         Exception("duplicate key value violates unique constraint\n"
                                   "DETAIL: Key (q)=(the user's question)"))
    reason = exception_reason(exc)
    assert reason.startswith("IntegrityError(Exception): duplicate key value") and "question" not in reason
    assert scrub("HTTP 401: {'error': 'bad key sk-abcdefghijklmnop', 'auth': 'Bearer abcdef1234567890'}") == (
        "HTTP 401: {'error': 'bad key [REDACTED]', 'auth': 'Bearer [REDACTED]'}")
    assert scrub("api_key=hunter2 and password: swordfish") == "api_key=[REDACTED] and password: [REDACTED]"
    assert scrub("postgresql://citestream:s3cret@postgres:5432/db") == "postgresql://citestream:[REDACTED]@postgres:5432/db"
    assert scrub("a\x1b[2Jb\u202ec", 100) == "a [2Jb c" and len(scrub("y" * 1000, 50)) == 50
