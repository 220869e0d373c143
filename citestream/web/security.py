"""Headers on every response and a same-origin rule for every request that changes something.

The Content-Security-Policy allows scripts, styles, images and connections
from the page's own origin only: no inline script or style, no CDN, no
framing. So a string from a topic or a PDF that slipped into markup could
still not run. Writes (ask, upload) must come from the page itself: a request
whose Origin is another site is refused, and the write endpoints need a JSON
body or a custom header, which a cross-site form cannot send without a CORS
preflight that this server never grants. Reads of ``/api/`` cost work (a
timeline starts a Kafka consumer and checks the ledger): one a browser marks as
coming from another site (``Sec-Fetch-Site: cross-site`` or ``same-site``, or an
``Origin`` that is not the page's) is refused before it starts, so a page on
another origin cannot make a visitor's browser trigger them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class SecurityHeaders:
    """Pure ASGI (no response buffering), so server-sent events stream through untouched."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if (scope["method"] not in SAFE_METHODS or scope["path"].startswith("/api/")) and not _same_origin(scope):
            await _refuse(send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [h for h in HEADERS if h[0] not in names]
            await send(message)

        await self.app(scope, receive, with_headers)


def _same_origin(scope: Scope) -> bool:
    headers = dict(scope.get("headers", []))
    if headers.get(b"sec-fetch-site") in (b"cross-site", b"same-site"):
        return False
    origin = headers.get(b"origin")
    if origin is None:  # not a browser's cross-site request (curl, tests); browsers send Origin on POST
        return True
    host = headers.get(b"host", b"").decode("latin-1")
    return urlsplit(origin.decode("latin-1")).netloc == host


async def _refuse(send: Send) -> None:
    body = b'{"error": "cross-origin request refused"}'
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *HEADERS]})
    await send({"type": "http.response.body", "body": body})
