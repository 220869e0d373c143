"""Real servers without Docker: embedded Postgres+pgvector and a Kafka-protocol broker.

``lifecycle`` (up, down, status: what a session started, stopped by PID), ``postgres``, ``broker``, ``worker``,
``docker``.
"""

from .lifecycle import database_name, down, secure_state_dir, servers, status, up

__all__ = ["database_name", "down", "secure_state_dir", "servers", "status", "up"]
