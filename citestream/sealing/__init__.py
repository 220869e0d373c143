"""Every record a worker writes carries a MAC; a stage, and the page, trust only records whose MAC holds.

Anyone who can publish to a topic could otherwise hand a stage a record of their own: made-up quotes on real
chunk ids on ``qa.relevant`` became a PASSED answer, and a forged record on ``answers`` was shown to the asker.
So every record of a sealed model (``models.common.Sealed``: the records of every topic a worker writes) carries
``mac`` = HMAC-SHA256 of its canonical JSON without ``mac`` (keys sorted, no spaces, UTF-8), under a key kept in a
file outside Postgres and the broker (``<state>/keys/records.key``, 0600). The MAC covers whatever fields the record
has, so a field added to a model is covered without a change here. Records from outside (``questions``,
``documents.ingest``, ``claims.verify``, ``compliance.requests``) carry none: they are the untrusted input, held to
their contracts instead.

One place seals (``RecordSealer.payload`` for a topic, ``seal`` in-process), one place checks (``check``); which
records are checked follows from the flow table: a step whose source topic is sealed checks its input.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from ..core.errors import RecordRejected
from .keys import load_key

MAC_FIELD = "mac"
PROVENANCE_MISMATCH = "PROVENANCE_MISMATCH"

RecordT = TypeVar("RecordT", bound=BaseModel)


def canonical(data: Mapping[str, Any]) -> bytes:
    """The bytes a MAC covers: the record without ``mac``, keys sorted, no spaces, UTF-8 (the same bytes whether
    the record was built in this process or decoded from a topic). orjson: the standard library's encoder took
    30 times as long, about 2 ms a question on a loaded machine (docs/experiments/2026-11-27-record-macs.md)."""
    fields = {name: value for name, value in data.items() if name != MAC_FIELD}
    try:
        return orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # what orjson refuses (a lone surrogate, an integer past 64 bits): still a fate
        text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8", "surrogatepass")


class KeyUnavailable(Exception):
    """The record key cannot be read; the message says where and why."""


class RecordSealer:
    """Seals and checks records with one key."""

    def __init__(self, key: bytes):
        if len(key) < 16:
            raise KeyUnavailable("the record key is shorter than 16 bytes")
        self._key = key

    @classmethod
    def from_file(cls, path: Path, create: bool = False) -> RecordSealer:
        """The sealer of the key in ``path`` (made when missing and ``create``); ``KeyUnavailable`` otherwise."""
        try:
            key = load_key(path, create=create)
        except (OSError, ValueError) as exc:
            raise KeyUnavailable(f"cannot read the record key {path}: {type(exc).__name__}") from None
        if key is None:
            raise KeyUnavailable(f"no record key at {path} (a worker makes it when it starts)")
        return cls(key)

    def mac(self, data: Mapping[str, Any]) -> str:
        return hmac.new(self._key, canonical(data), hashlib.sha256).hexdigest()

    def seal(self, record: RecordT) -> RecordT:
        """``record`` with its ``mac`` set over its current fields (the in-process path)."""
        record.mac = self.mac(record.model_dump(mode="json"))  # type: ignore[attr-defined]
        return record

    def payload(self, record: BaseModel) -> bytes:
        """The record's bytes for a topic, sealed (``record`` gets its ``mac``)."""
        return self.seal(record).model_dump_json().encode()

    def problem(self, data: object) -> str | None:
        """Why ``data`` (a decoded record, or a record model) is not one a worker wrote, or None when its MAC holds."""
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json")
        if not isinstance(data, Mapping):
            return "not a record object"
        given = data.get(MAC_FIELD)
        if not isinstance(given, str) or not given:
            return "the record carries no MAC: no worker wrote it"
        if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self.mac(data).encode()):
            return "the record's MAC does not match its content: altered, or written without the worker's key"
        return None

    def check(self, data: object) -> None:
        """``RecordRejected(PROVENANCE_MISMATCH)`` unless a worker wrote ``data`` as it is."""
        if problem := self.problem(data):
            raise RecordRejected(PROVENANCE_MISMATCH, problem)


__all__ = ["MAC_FIELD", "PROVENANCE_MISMATCH", "KeyUnavailable", "RecordSealer", "canonical"]
