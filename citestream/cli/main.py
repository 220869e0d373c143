"""citestream: one entry point for the worker, operations and the clients."""

from __future__ import annotations

import argparse
import sys

from . import (
    ask, documents, flow, infra, ingest, ledger, migrate, readme, reconcile, schemas, scorer, settings, topics,
    verify_eval, web, worker,
)
from . import eval as evaluate

COMMANDS = (infra, migrate, topics, schemas, ingest, documents, ask, worker, web, reconcile, evaluate, ledger, scorer,
            verify_eval, flow, settings, readme)
"""One module per command, in the order ``--help`` lists them; each adds its parser (``add_parser``)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citestream", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from ..core.errors import CannotStart
    from ..core.scrub import log_one_line_per_record

    log_one_line_per_record()  # record text in a log line never starts another (docs/security.md, point 11)
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except CannotStart as exc:  # the user can fix it: one line, no traceback
        print(f"citestream: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
