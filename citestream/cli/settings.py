"""``citestream settings``: the settings reference, made from ``config.Settings``' fields and their descriptions.

``--markdown`` prints the table docs/settings.md holds between its ``settings`` markers (``cli.readme``); without it,
one line per setting. Defaults are the fields' own, never the environment's.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from pydantic_core import PydanticUndefined


def add_parser(sub) -> None:
    p = sub.add_parser("settings", help="the settings reference, from config.py's fields (CITESTREAM_*)")
    p.add_argument("--markdown", action="store_true", help="the table of docs/settings.md")
    p.set_defaults(fn=cmd_settings)


def default_text(value: object) -> str:
    """A field's default as the reference shows it: paths under the project relative to it, secrets hidden."""
    from ..config import PROJECT_ROOT

    if value is None or value is PydanticUndefined or value == "":
        return "empty"
    if isinstance(value, SecretStr):
        return "empty" if not value.get_secret_value() else "(secret)"
    if isinstance(value, Path):
        return str(value.relative_to(PROJECT_ROOT)) if value.is_relative_to(PROJECT_ROOT) else str(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace(str(PROJECT_ROOT), ".")


def reference() -> list[tuple[str, str, str]]:
    """(variable, default, description) of every setting, in ``config.Settings``' order."""
    from ..config import Settings

    prefix = Settings.model_config.get("env_prefix", "")
    return [(f"{prefix}{name}".upper(), default_text(field.default), " ".join((field.description or "").split()))
            for name, field in Settings.model_fields.items()]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def settings_markdown() -> str:
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| `{name}` | `{_cell(default)}` | {_cell(meaning)} |" for name, default, meaning in reference()]
    return "\n".join(lines) + "\n"


def settings_text() -> str:
    rows = reference()
    width = max(len(name) for name, _, _ in rows)
    return "".join(f"{name:<{width}}  {default}\n" + (f"{'':<{width}}  {meaning}\n" if meaning else "")
                   for name, default, meaning in rows)


def cmd_settings(args) -> int:
    print(settings_markdown() if args.markdown else settings_text(), end="")
    return 0
