"""What a raw Kafka record passes before a stage sees it, and the dead letter it gets when it does not.

Every refusal is a ``RecordRejected`` with a reason code, so every record ends
somewhere: on the next topic, or on ``qa.deadletter``. The checks are ordered
cheapest first and each one bounds the next: bytes (``TopicSpec.max_bytes``),
UTF-8, strict JSON (no NaN, no duplicate keys), nesting depth (``core.strict_json``,
which the web page reads topics with too), then the topic's record contract.
"""

from __future__ import annotations

from pydantic import BaseModel, ValidationError

from ..core.errors import RecordRejected
from ..core.strict_json import check_size, decode_json
from ..core.scrub import scrub
from ..models.ops import dead_letter_record, usable_id


def contract_errors(exc: ValidationError) -> str:
    """Where and why a record broke its contract: field paths and messages, never the offending values."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:5]:
        where = ".".join(scrub(str(p), 40) for p in error["loc"][:6])
        parts.append(f"{where}: {error['msg']}")
    return scrub("; ".join(parts), 1000)


def parse(model: type[BaseModel], data: object) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RecordRejected("SCHEMA_VIOLATION", contract_errors(exc)) from None
    except RecursionError:
        raise RecordRejected("NESTING_TOO_DEEP", "record nested deeper than the contract allows") from None


__all__ = ["RecordRejected", "check_size", "contract_errors", "dead_letter_record", "decode_json", "parse",
           "usable_id"]
