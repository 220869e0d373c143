"""The same servers from Docker images through testcontainers (CITESTREAM_INFRA=docker, needs a Docker engine)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

KAFKA_IMAGE = "apache/kafka:3.8.0"
PGVECTOR_IMAGE = "pgvector/pgvector:pg16"


@contextmanager
def docker_servers() -> Iterator[dict[str, str]]:
    """Start Apache Kafka (KRaft) and pgvector Postgres; export their URLs as CITESTREAM_* variables."""
    from testcontainers.kafka import KafkaContainer
    from testcontainers.postgres import PostgresContainer

    with KafkaContainer(KAFKA_IMAGE).with_kraft() as kafka, \
            PostgresContainer(PGVECTOR_IMAGE, username="postgres", password="postgres", dbname="citestream") as pg:
        env = {
            "CITESTREAM_BROKER_URL": f"kafka://{kafka.get_bootstrap_server()}",
            "CITESTREAM_DATABASE_URL": pg.get_connection_url(driver=None),
            "CITESTREAM_INFRA": "docker",
        }
        previous = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for k, v in previous.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
