"""``citestream topics``: create every registered topic on the broker."""

from __future__ import annotations

from ..config import get_settings


def add_parser(sub) -> None:
    p = sub.add_parser("topics", help="create every registered topic")
    p.add_argument("action", choices=["create"])
    p.set_defaults(fn=cmd_topics)


def cmd_topics(args) -> int:
    from ..topics import create_topics

    settings = get_settings()
    created = create_topics(settings.bootstrap_servers, settings.topic_prefix, override=settings.topic_partitions,
                            retention_hours=settings.topic_retention_hours, **settings.kafka_security())
    kept = f"{settings.topic_retention_hours:g} h" if settings.topic_retention_hours else "forever"
    print(f"topics created: {', '.join(created) or 'none (all exist)'}; records kept {kept}")
    return 0
