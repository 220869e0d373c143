"""Every record a worker writes carries a seal; a stage, the page and the clients trust only records whose seal holds.

Anyone who can publish to a topic could otherwise hand a stage a record of their own: made-up quotes on real
chunk ids on ``qa.relevant`` became a PASSED answer, and a forged record on ``answers`` was shown to the asker.
So every record of a sealed model (``models.common.Sealed``: the records of every topic a worker writes) carries
``mac`` = the Ed25519 signature of its canonical JSON without ``mac`` (keys sorted, no spaces, UTF-8), under a
private key kept in a file outside Postgres and the broker (``<state>/keys/records.key``, 0600). The field keeps
its first name (it held an HMAC until issue 48) so consumers and schemas stay as they were. Readers that are not
workers (the page, ``citestream ask`` and ``eval``) hold the public key only (``records.pub``): they can check a
seal and never make one, so neither the page nor the PDF child it starts can pass off a record. The seal covers
whatever fields the record has, so a field added to a model is covered without a change here. Records from
outside (``questions``, ``documents.ingest``, ``claims.verify``, ``compliance.requests``) carry none: they are the
untrusted input, held to their contracts instead.

One place seals (``RecordSealer.payload`` for a topic, ``seal`` in-process), one place checks
(``RecordVerifier.check``); which records are checked follows from the flow table: a step whose source topic is
sealed checks its input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel

from ..core.errors import RecordRejected
from .keys import KeyFileOpen, load_key, load_public, write_public

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
    """The record key cannot be read; the message says why (``where`` says where, kept out of what the page shows)."""

    def __init__(self, message: str, where: Path | None = None):
        super().__init__(message)
        self.where = where


def public_path(key_path: Path) -> Path:
    """Where the public key of the private key in ``key_path`` is kept: beside it, ``records.pub``."""
    return key_path.with_suffix(".pub")


class RecordVerifier:
    """Checks records' seals with the public key alone."""

    def __init__(self, public: Ed25519PublicKey):
        self._public = public

    @classmethod
    def from_file(cls, path: Path) -> RecordVerifier:
        """The verifier of the public key in ``path``; ``KeyUnavailable`` otherwise."""
        try:
            raw = load_public(path)
            public = Ed25519PublicKey.from_public_bytes(raw) if raw is not None else None
        except KeyFileOpen as exc:
            raise KeyUnavailable(f"the record key is refused: {exc}", path) from None
        except (OSError, ValueError) as exc:
            raise KeyUnavailable(f"the record key cannot be read ({type(exc).__name__})", path) from None
        if public is None:
            raise KeyUnavailable("no record key yet (a worker makes it when it starts)", path)
        return cls(public)

    def problem(self, data: object) -> str | None:
        """Why ``data`` (a decoded record, or a record model) is not one a worker wrote, or None when its seal holds."""
        if isinstance(data, BaseModel):
            data = data.model_dump(mode="json")
        if not isinstance(data, Mapping):
            return "not a record object"
        given = data.get(MAC_FIELD)
        if not isinstance(given, str) or not given:
            return "the record carries no seal: no worker wrote it"
        try:
            self._public.verify(bytes.fromhex(given), canonical(data))
        except (ValueError, InvalidSignature):
            return "the record's seal does not match its content: altered, or written without the worker's key"
        return None

    def check(self, data: object) -> None:
        """``RecordRejected(PROVENANCE_MISMATCH)`` unless a worker wrote ``data`` as it is."""
        if problem := self.problem(data):
            raise RecordRejected(PROVENANCE_MISMATCH, problem)


class RecordSealer(RecordVerifier):
    """Seals records with the private key (the worker's) and checks them with its public key."""

    def __init__(self, key: bytes):
        if len(key) != 32:
            raise KeyUnavailable("the record key is not 32 bytes")
        self._private = Ed25519PrivateKey.from_private_bytes(key)
        super().__init__(self._private.public_key())

    @classmethod
    def from_file(cls, path: Path, create: bool = False) -> RecordSealer:
        """The sealer of the key in ``path`` (made when missing and ``create``, its public key written beside it);
        ``KeyUnavailable`` otherwise."""
        try:
            key = load_key(path, create=create)
        except KeyFileOpen as exc:
            raise KeyUnavailable(f"the record key is refused: {exc}", path) from None
        except (OSError, ValueError) as exc:
            raise KeyUnavailable(f"cannot read the record key {path}: {type(exc).__name__}", path) from None
        if key is None:
            raise KeyUnavailable(f"no record key at {path} (a worker makes it when it starts)", path)
        sealer = cls(key)
        if create:
            sealer.publish(public_path(path))
        return sealer

    def publish(self, path: Path) -> None:
        """Write the public key to ``path`` unless it already holds it."""
        raw = self._public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        try:
            if load_public(path) == raw:
                return
        except (KeyFileOpen, ValueError):
            pass  # rewritten below, with its mode
        write_public(path, raw)

    def mac(self, data: Mapping[str, Any]) -> str:
        return self._private.sign(canonical(data)).hex()

    def seal(self, record: RecordT) -> RecordT:
        """``record`` with its ``mac`` set over its current fields (the in-process path)."""
        record.mac = self.mac(record.model_dump(mode="json"))  # type: ignore[attr-defined]
        return record

    def payload(self, record: BaseModel) -> bytes:
        """The record's bytes for a topic, sealed (``record`` gets its ``mac``)."""
        return self.seal(record).model_dump_json().encode()


__all__ = ["MAC_FIELD", "PROVENANCE_MISMATCH", "KeyUnavailable", "RecordSealer", "RecordVerifier", "canonical",
           "public_path"]
