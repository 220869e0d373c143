"""``citestream infra``: start, stop or report the embedded Postgres and broker."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("infra", help="start/stop the embedded Postgres and broker")
    p.add_argument("action", choices=["up", "down", "status"])
    p.add_argument("--owner-file", help="record what this call started / stop only that")
    p.set_defaults(fn=cmd_infra)


def cmd_infra(args) -> int:
    from .. import infra

    settings = get_settings()
    owner = Path(args.owner_file) if args.owner_file else None
    if args.action == "up":
        started = infra.up(settings, owner)
        print(f"postgres on 127.0.0.1:{settings.pg_port}, {settings.broker} broker on 127.0.0.1:{settings.broker_port}"
              f" (started now: {', '.join(started) or 'none'})")
    elif args.action == "down":
        print(f"stopped: {', '.join(infra.down(settings, owner)) or 'nothing'}")
    else:
        print(json.dumps(infra.status(settings)))
    return 0
