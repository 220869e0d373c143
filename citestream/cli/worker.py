"""``citestream worker``: run the stream agents, and beside them the reconciler, the ledger anchor and the uploads'
expiry."""

from __future__ import annotations

import logging

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("worker", help="run the stream agents")
    p.add_argument("--loglevel", default="info")
    p.set_defaults(fn=cmd_worker)


def cmd_worker(args) -> int:
    import faust

    from .. import metrics
    from ..ops import reconcile
    from ..deps import get_deps
    from ..streams.agents import app
    from ..streams.startup import wait_for_servers

    import os

    from ..ingest.expiry import keep_uploads_expiring
    from ..store.anchors import keep_anchored

    os.umask(0o077)  # anything the worker writes (checkpoints, keys) is the owner's only
    logging.basicConfig(level=args.loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = get_settings()
    wait_for_servers(settings, logging.getLogger("citestream.worker"))
    metrics.serve(settings.metrics_port, settings.metrics_host)
    get_deps().warm()
    groups = [settings.app_id]
    if settings.reconcile_after_s > 0:
        app.task(reconcile.supervised)
        groups.append(f"{settings.app_id}-reconciler")
    import threading

    threading.Thread(target=reconcile.stuck_group_watchdog, args=(settings, groups), daemon=True,
                     name="group-watchdog").start()
    threading.Thread(target=keep_anchored, args=(settings,), daemon=True, name="ledger-anchor").start()
    threading.Thread(target=keep_uploads_expiring, args=(settings,), daemon=True, name="uploads-expiry").start()
    worker = faust.Worker(app, loglevel=args.loglevel, quiet=True)
    worker.execute_from_commandline()
    return 0
