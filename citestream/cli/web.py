"""``citestream web``: serve the web page (citestream/web): a Kafka client serving browsers; see docs/web.md."""

from __future__ import annotations

import logging
import socket


def add_parser(sub) -> None:
    p = sub.add_parser("web", help="serve the web page (ask, live flow, citations, documents)")
    p.add_argument("--host", help="listen address (default CITESTREAM_UI_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, help="port (default CITESTREAM_UI_PORT, 8088)")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_web)


def cmd_web(args) -> int:
    """The web page (citestream/web): a Kafka client serving browsers; see docs/web.md."""
    import uvicorn

    from ..web import create_app
    from ..web.settings import get_web_settings

    import os

    os.umask(0o077)  # uploaded PDFs and the page cache: the owner's only
    web = get_web_settings()
    if args.host or args.port:
        web = web.model_copy(update={k: v for k, v in (("host", args.host), ("port", args.port)) if v})
    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)  # a line per partition on every group join
    print(f"citestream web on {web.url}", flush=True)
    # X-Forwarded-For only from the proxies the operator names: uvicorn believes 127.0.0.1's by default, and every
    # visitor of a page on 127.0.0.1 would pick the address its budgets are counted under
    trusted = web.trusted_proxies.strip()
    config = uvicorn.Config(create_app(web=web), log_level=args.loglevel, timeout_graceful_shutdown=3,
                            access_log=False, proxy_headers=bool(trusted), forwarded_allow_ips=trusted or None)
    uvicorn.Server(config).run(sockets=listening_sockets(web.host, web.port, web.pdf_send_deadline_s))
    return 0


def listening_sockets(host: str, port: int, stalled_s: float) -> list[socket.socket]:
    """The page's sockets, bound as ``uvicorn.run`` binds (asyncio's ``create_server``): every address ``host``
    names, all interfaces for "", IPv6 ones IPv6 only. Their connections inherit ``TCP_USER_TIMEOUT``: the kernel
    ends one whose bytes have waited ``stalled_s`` for a client that reads none. A response the page gives up on (a
    stalled download) is closed, and a close waits for its unsent bytes with no end: visitors could pile such
    connections up until the page ran out of memory or descriptors (third review after issue 54)."""
    found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets = []
    for family, kind, proto, _, address in dict.fromkeys(found):
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, max(1, int(stalled_s * 1000)))
        sock.bind(address)
        sock.listen(2048)
        sockets.append(sock)
    return sockets
