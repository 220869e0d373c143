"""One agent per row of ``flow.FLOW``, each named ``citestream.<stage>`` and reading the row's source topic; then the
fallback-rate alert. Importing this module wires them all on ``faust_app.app`` (the worker does,
``cli.worker.cmd_worker``)."""

from ..flow import FLOW
from .faust_app import app, wire

for _step in FLOW:
    wire(_step)

from . import alerts  # noqa: E402, F401  (registers the fallback-rate agent after the flow's, as before)

__all__ = ["app"]
