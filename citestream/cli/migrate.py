"""``citestream migrate``: apply the Alembic migrations."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("migrate", help="apply Alembic migrations")
    p.add_argument("revision", nargs="?", default="head")
    p.set_defaults(fn=cmd_migrate)


def cmd_migrate(args) -> int:
    from alembic import command
    from alembic.config import Config

    from ..config import PROJECT_ROOT

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    command.upgrade(config, args.revision)
    print(f"database migrated to {args.revision}")
    return 0
