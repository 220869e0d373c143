"""``citestream reconcile``: re-drive questions that have no outcome (also runs inside the worker)."""

from __future__ import annotations

import logging

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("reconcile", help="re-drive questions that have no outcome (also runs inside the worker)")
    p.add_argument("--after", type=float, help="seconds without progress before a re-drive (default from settings)")
    p.add_argument("--once-idle", type=float, help="exit when nothing is open and no question came for this long")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_reconcile)


def cmd_reconcile(args) -> int:
    import asyncio

    from ..ops import reconcile

    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = get_settings()
    if args.after is not None:
        settings = settings.model_copy(update={"reconcile_after_s": args.after})
    rec = asyncio.run(reconcile.run(settings, once_idle_s=args.once_idle))
    print(f"reconciled: re-driven {rec.redriven}, answered as failed {rec.failed}, still open {len(rec.open)}")
    return 0
