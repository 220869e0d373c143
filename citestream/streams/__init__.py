"""faust-streaming agents. Importing this package wires every agent to its topics.

The agents are generated from ``citestream.flow.FLOW`` (``agents``); beside them, the fallback-rate
alert (``alerts``).
"""

from . import agents, alerts  # noqa: F401  (registers the agents)
from .app import app

__all__ = ["app"]
