"""What one client may make the page do, beside the page's global caps: requests and writes a minute, bytes
uploaded a day, event streams, timeline reads, PDF renders and downloads at once; and the writes of all clients
together.

Without them one visitor could take every event-stream slot, every timeline read of the minute, every render,
and upload without end. A client is the peer's address, except that every loopback address (127.0.0.0/8, ::1, and
IPv4-mapped 127.x) is one client, ``loopback``: any local user can connect from any of the 16 million 127.x.y.z, so
a budget per loopback address was no budget (with 8 of them one user took all 32 event streams; issue 54). Local
users are one class in docs/security.md's model (the page has no login, and a token the page handed out could be
asked for again without end), so they share one budget. Behind a reverse proxy every visitor is the proxy's
address and they share one budget: raise the limits for that, or name the proxy (``trusted_proxies``) so its
``X-Forwarded-For`` names the visitor. The table of clients is bounded (``CLIENTS``, least recently seen forgotten
first), so a flood of addresses costs at most that.
"""

from __future__ import annotations

import ipaddress
import json
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Receive, Scope, Send

from .settings import WebSettings
from .throttle import Bucket, PerMinute

CLIENTS = 10_000
DAY_S = 86_400.0


class OverBudget(Exception):
    """The client spent this budget; ``retry_after_s`` says when it has enough again."""

    def __init__(self, what: str, retry_after_s: float):
        super().__init__(f"{what}; retry in {max(1, round(retry_after_s))} s")
        self.retry_after_s = retry_after_s


@dataclass
class _Client:
    requests: PerMinute
    writes: PerMinute
    timelines: PerMinute
    upload_bytes: Bucket
    held: dict[str, int] = field(default_factory=dict)  # streams, PDF jobs and downloads open now


LOOPBACK = "loopback"


def client_of(scope: Scope) -> str:
    """Whose budget a request spends: its peer's address, every loopback address being one (``LOOPBACK``)."""
    client = scope.get("client")
    if not client:
        return "unknown"
    address = str(client[0])
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    mapped = getattr(ip, "ipv4_mapped", None)
    return LOOPBACK if (mapped or ip).is_loopback else address


class Budgets:
    """Every client's budgets, each one made on its first request."""

    def __init__(self, web: WebSettings):
        self.web = web
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        self.all_writes = PerMinute(web.writes_per_minute_total)  # every client's together
        self.all_uploads = PerMinute(web.uploads_per_minute_total)

    def client(self, who: str) -> _Client:
        state = self._clients.get(who)
        if state is None:
            web = self.web
            daily = web.upload_mb_per_day * (1 << 20)
            state = _Client(PerMinute(web.requests_per_minute, burst=max(1.0, web.requests_per_minute / 4)),
                            PerMinute(web.writes_per_minute, burst=max(1.0, web.writes_per_minute / 2)),
                            PerMinute(web.timeline_reads_per_client_per_minute),
                            Bucket(daily, daily / DAY_S))
            self._clients[who] = state
            while len(self._clients) > CLIENTS:
                oldest, gone = next(iter(self._clients.items()))
                if any(gone.held.values()):  # holding a slot: kept, so its release finds it
                    self._clients.move_to_end(oldest)
                    break
                self._clients.popitem(last=False)
        else:
            self._clients.move_to_end(who)
        return state

    def spend(self, who: str, bucket: str, what: str, amount: float = 1.0) -> None:
        """Take ``amount`` from the client's ``bucket`` (requests, writes, timelines, upload_bytes), or raise."""
        wait = getattr(self.client(who), bucket).take(amount)
        if wait:
            raise OverBudget(what, wait)

    def take(self, who: str, kind: str, most: int, what: str) -> None:
        """One of the at most ``most`` ``kind`` (event streams, PDF jobs, downloads) a client may hold at once, or
        raise."""
        state = self.client(who)
        if state.held.get(kind, 0) >= most:
            raise OverBudget(what, 10)
        state.held[kind] = state.held.get(kind, 0) + 1

    def give_back(self, who: str, kind: str) -> None:
        state = self.client(who)
        state.held[kind] = max(0, state.held.get(kind, 0) - 1)

    @contextmanager
    def holding(self, who: str, kind: str, most: int, what: str) -> Iterator[None]:
        """``take`` for the ``with`` block, given back however it ends."""
        self.take(who, kind, most, what)
        try:
            yield
        finally:
            self.give_back(who, kind)


class ClientBudgets:
    """ASGI middleware: every ``/api/`` request costs the client one of its requests a minute, and every write (a
    question, an upload) one of its writes a minute; past them, 429 with ``Retry-After``."""

    def __init__(self, app: ASGIApp, budgets: Budgets):
        self.app, self.budgets = app, budgets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            who = client_of(scope)
            try:
                self.budgets.spend(who, "requests", f"more than {self.budgets.web.requests_per_minute} requests "
                                                    "a minute from this address")
                if scope["method"] == "POST":
                    self.budgets.spend(who, "writes", f"more than {self.budgets.web.writes_per_minute} questions "
                                                      "and uploads a minute from this address")
                    if wait := self.budgets.all_writes.allow():
                        raise OverBudget("the page takes no more questions and uploads this minute", wait)
            except OverBudget as exc:
                await too_many(send, exc)
                return
        await self.app(scope, receive, send)


async def too_many(send: Send, exc: OverBudget) -> None:
    body = json.dumps({"error": str(exc)}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(max(1, round(exc.retry_after_s))).encode())]})
    await send({"type": "http.response.body", "body": body})
