"""The page's limits on what one client can make it hold or do: body bytes, open streams, reads per minute.

Each limit answers with a status a client can act on (413, 503, 429) instead of letting memory, sockets or
Kafka consumers grow with what a client sends.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator


class BodyTooLarge(Exception):
    """The body is larger than the endpoint takes; nothing past the limit was read."""


async def read_capped(declared: str | None, stream: AsyncIterator[bytes], limit: int) -> bytes:
    """The body, read while it stays within ``limit`` bytes: a declared length over it is refused unread, and a
    chunked body is refused at the first chunk past it (a 400 MB body never sits in memory)."""
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"{int(declared)} bytes declared; at most {limit}")
    body = bytearray()
    async for chunk in stream:
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(f"more than {limit} bytes")
    return bytes(body)


class Slots:
    """At most ``size`` holders at once (open event streams); ``take`` is False when none is free."""

    def __init__(self, size: int):
        self.size, self.taken = size, 0

    def take(self) -> bool:
        if self.taken >= self.size:
            return False
        self.taken += 1
        return True

    def give_back(self) -> None:
        self.taken = max(0, self.taken - 1)


class Bucket:
    """A token bucket: up to ``capacity`` at once, refilled at ``per_second``; ``take`` says how long to wait."""

    def __init__(self, capacity: float, per_second: float):
        self.capacity, self.per_second = capacity, per_second
        self.tokens, self.at = capacity, time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.per_second)
        self.at = now

    def take(self, amount: float = 1.0) -> float:
        """0 when ``amount`` may go now (and is taken); else the seconds until it could (nothing is taken)."""
        self._refill()
        if self.tokens >= amount:
            self.tokens -= amount
            return 0.0
        return (amount - self.tokens) / self.per_second if self.per_second > 0 else float("inf")

    def left(self) -> float:
        self._refill()
        return self.tokens


class PerMinute(Bucket):
    """``rate`` actions a minute, up to ``burst`` (default: a tenth of them, at least one) at once."""

    def __init__(self, rate: int, burst: float | None = None):
        super().__init__(burst if burst is not None else max(1.0, rate / 10), rate / 60)
        self.burst = self.capacity

    def allow(self) -> float:
        """0 when the action may go now (and takes its token); else the seconds until one is free."""
        return self.take()
