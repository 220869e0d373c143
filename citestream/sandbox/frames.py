"""One message between the parent and a child: two big-endian lengths, a JSON header, a binary body."""

from __future__ import annotations

import json
import struct

PREFIX = struct.Struct(">II")  # header bytes, body bytes


def encode(header: dict, body: bytes = b"") -> bytes:
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return PREFIX.pack(len(raw), len(body)) + raw + body


def write(stream, header: dict, body: bytes = b"") -> None:
    stream.write(encode(header, body))
    stream.flush()


def read(stream) -> tuple[dict, bytes] | None:
    """The next message from a blocking stream; None when it closed (the parent is gone)."""
    prefix = stream.read(PREFIX.size)
    if len(prefix) < PREFIX.size:
        return None
    header_len, body_len = PREFIX.unpack(prefix)
    header, body = stream.read(header_len), stream.read(body_len)
    if len(header) < header_len or len(body) < body_len:
        return None
    return json.loads(header), body
