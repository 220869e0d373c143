"""Topic creation and configuration through the Kafka admin API: every registered topic, its partitions and
retention."""

from __future__ import annotations

import logging

from .registry import REGISTRY, partitions

log = logging.getLogger("citestream.topics")


RETENTION = "retention.ms"


def retention_ms(hours: float) -> str:
    """Kafka's ``retention.ms`` for ``hours`` (``CITESTREAM_TOPIC_RETENTION_HOURS``); 0 hours = forever (-1)."""
    return "-1" if hours == 0 else str(round(hours * 3_600_000))


def create_topics(bootstrap_servers: str, prefix: str = "", replication: int = 1, override: int | None = None,
                  retention_hours: float | None = None, **security) -> list[str]:
    """Create every registered topic that does not exist yet; returns the names created. An existing topic keeps
    its partitions (the broker cannot take partitions away, and adding some would move keys between them).

    ``override``: ``partitions``' override. ``retention_hours``: how long the broker keeps records, set on the new
    topics and changed on existing ones that keep them for another time (None: the broker's default, untouched).
    ``security``: the SASL keyword arguments of ``Settings.kafka_security()``.
    """
    from kafka.admin import KafkaAdminClient, NewTopic

    configs = {} if retention_hours is None else {RETENTION: retention_ms(retention_hours)}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, client_id="citestream-admin", **security)
    try:
        existing = set(admin.list_topics())
        ours = [prefix + t.name for t in REGISTRY.values()]
        wanted = [
            NewTopic(name, num_partitions=partitions(t.name, override), replication_factor=replication,
                     topic_configs=configs)
            for name, t in zip(ours, REGISTRY.values())
            if name not in existing
        ]
        if wanted:
            admin.create_topics(wanted)
        if configs:
            _set_configs(admin, [name for name in ours if name in existing], configs)
        return [t.name for t in wanted]
    finally:
        admin.close()


def _described(admin, names: list[str]) -> dict[str, dict[str, str]]:
    """The broker's configuration of each topic of ``names`` (name → key → value), in one request."""
    from kafka.admin import ConfigResource, ConfigResourceType

    described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name) for name in names])
    topics = described.get("topic", {})
    return {name: {key: entry["value"] for key, entry in topics.get(name, {}).items()} for name in names}


def _set_configs(admin, names: list[str], configs: dict[str, str]) -> None:
    """``configs`` on the topics ``names`` where they differ (one describe, one alter; keys not named untouched)."""
    from kafka.admin import ConfigResource, ConfigResourceType

    if not names:
        return
    current = _described(admin, names)
    stale = [name for name in names if any(current[name].get(key) != value for key, value in configs.items())]
    if stale:
        result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, name, configs=configs)
                                      for name in stale])
        refused = {name: outcome for name, outcome in result.get("topic", {}).items() if outcome != "OK"}
        if refused:  # a broker that does not let this client alter topics: they keep what they had
            log.warning("the broker kept its own configuration of %s: %s", ", ".join(sorted(refused)), refused)


def topic_configs(bootstrap_servers: str, name: str, **security) -> dict[str, str]:
    """The broker's configuration of topic ``name`` (key → value)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers, client_id="citestream-admin", **security)
    try:
        return _described(admin, [name])[name]
    finally:
        admin.close()
