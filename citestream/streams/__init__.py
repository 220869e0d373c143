"""faust-streaming agents. Importing this package wires every agent to its topics.

The question flow, one agent per file:
questions → retrieve → qa.facts → filter → qa.relevant → assemble → qa.prompts → generate → qa.generations
→ validate → answers. Beside it: ingest.
"""

from . import alerts, assemble, compliance, filter, generate, ingest, retrieve, validate, verify  # noqa: F401  (registers the agents)
from .app import app

__all__ = ["app"]
