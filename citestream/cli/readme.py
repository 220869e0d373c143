"""The docs' parts made from the code: each lies between ``<!-- <name>: made by ... -->`` and ``<!-- end <name> -->``
in the page ``PAGES`` names and is rewritten by ``citestream readme`` (``make readme``); a test fails when one is stale.
The README links them rather than holding them, so it stays short enough for a user to read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def _settings() -> str:
    from .settings import settings_markdown

    return settings_markdown()


def _flow() -> str:
    from .flow import flow_mermaid

    return "```mermaid\n" + flow_mermaid() + "```\n"


BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "flow": ("citestream flow --mermaid", _flow),
    "settings": ("citestream settings --markdown", _settings),
}
"""name → (the command that prints it, what makes it)."""

PAGES: dict[str, tuple[str, ...]] = {
    "docs/architecture.md": ("flow",),
    "docs/settings.md": ("settings",),
}
"""page (relative to the project) → the blocks it holds."""


def _span(text: str, name: str) -> tuple[int, int, int] | None:
    """Where block ``name`` is: its opening marker's start, its body's start and its end marker's start."""
    start = text.find(f"<!-- {name}: made by ")
    body = text.find("-->\n", start) + len("-->\n") if start >= 0 else -1
    end = text.find(f"<!-- end {name} -->", body) if body >= len("-->\n") else -1
    if start < 0 or end < 0 or text.find(f"<!-- {name}: made by ", start + 1) >= 0:
        return None
    return start, body, end


def block(text: str, name: str) -> str | None:
    """The README's copy of block ``name``, or None when its markers are missing (or there are two)."""
    span = _span(text, name)
    return text[span[1]:span[2]] if span else None


def refreshed(text: str, names: tuple[str, ...] = tuple(BLOCKS)) -> str:
    """``text`` with blocks ``names`` made anew."""
    for name in names:
        command, make = BLOCKS[name]
        span = _span(text, name)
        if span is None:
            raise ValueError(f"the page needs one '{name}' block between its markers")
        text = f"{text[:span[0]]}<!-- {name}: made by `{command}` -->\n{make()}{text[span[2]:]}"
    return text


def add_parser(sub) -> None:
    p = sub.add_parser("readme", help="rewrite the docs' parts made from the code (the flow diagram in "
                       "docs/architecture.md, the settings table in docs/settings.md)")
    p.add_argument("root", nargs="?", default=".", help="the project folder (default: the current one)")
    p.set_defaults(fn=cmd_readme)


def cmd_readme(args) -> int:
    for page, names in PAGES.items():
        path = Path(args.root) / page
        text = path.read_text(encoding="utf-8")
        new = refreshed(text, names)
        if new != text:
            path.write_text(new, encoding="utf-8")
        print(f"{path}: {'rewritten' if new != text else 'current'} ({', '.join(names)})")
    return 0
