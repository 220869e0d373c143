"""The topic registry: one table of name → partitions → key → value model.

Agents are wired through :func:`spec`, so an agent that reads or writes a record model other than its topic's is
refused at import time. ``registry`` (the table, ``spec``, ``partitions``), ``admin`` (creating and configuring the
topics on the broker).
"""

from .admin import RETENTION, create_topics, retention_ms, topic_configs
from .registry import INTERNAL_MAX_BYTES, KB, REGISTRY, TopicSpec, TopicWiringError, partitions, spec

__all__ = ["INTERNAL_MAX_BYTES", "KB", "REGISTRY", "RETENTION", "TopicSpec", "TopicWiringError", "create_topics",
           "partitions", "retention_ms", "spec", "topic_configs"]
