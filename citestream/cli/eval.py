"""``citestream eval``: score golden sets through the pipeline and apply the qa-contract-v1 gates (``eval.main``)."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="score golden sets through the pipeline and apply the qa-contract-v1 gates")
    p.add_argument("--set", action="append", help="a golden set JSONL (repeatable; default: both golden sets)")
    p.add_argument("--through", choices=["kafka", "inprocess"], default="kafka")
    p.add_argument("--out", default="eval-out", help="folder for the JSON report and the PNG plots")
    p.add_argument("--timeout", type=float, help="seconds to wait for all answers of a set (kafka)")
    p.add_argument("--no-gates", action="store_true", help="report only; exit 0 whatever the gates say")
    p.add_argument("--compare", nargs=2, metavar=("OLD.json", "NEW.json"), help="print metric deltas and stop")
    p.set_defaults(fn=cmd_eval)


def cmd_eval(args) -> int:
    from ..eval.main import cmd_eval as run_eval

    return run_eval(args)
