"""``citestream flow``: the topology drawn from ``flow.FLOW``, as text or, with ``--mermaid``, as the Mermaid
flowchart docs/architecture.md shows between its ``flow`` markers (``cli.readme``)."""

from __future__ import annotations

DEAD_LETTERS = "qa.deadletter"
ALERTS = "ops.alerts"


def add_parser(sub) -> None:
    p = sub.add_parser("flow", help="print the flow (stages and topics) from the flow table")
    p.add_argument("--mermaid", action="store_true", help="a Mermaid flowchart (the diagram of docs/architecture.md)")
    p.set_defaults(fn=cmd_flow)


def _flags(step) -> list[str]:
    names = ("admits_requests", "answers", "answers_on_failure", "counts_fallback", "takes_together")
    return [name.replace("_", " ") for name in names if getattr(step, name)]


def flow_text() -> str:
    """The question path on one line, each side flow on its own, what every stage may refuse and the alerts; then a
    line per stage: its topics, its function and its flags."""
    from ..flow import FLOW, QUESTION_PATH

    path = [QUESTION_PATH[0].source]
    for step in QUESTION_PATH:
        path += [step.stage, step.sink]
    lines = ["question path:", "  " + " ─► ".join(path), "side flows:"]
    lines += [f"  {step.source} ─► {step.stage} ─► {step.sink}" for step in FLOW if step not in QUESTION_PATH]
    lines.append(f"every stage: a record that breaks its contract ─► {DEAD_LETTERS} (original bytes + reason code)")
    lines += [f"{step.stage}'s fallback events ─► windowed fallback rate ─► {ALERTS}"
              for step in FLOW if step.counts_fallback]
    lines.append("stages:")
    width = max(len(step.stage) for step in FLOW)
    for step in FLOW:
        flags = ", ".join(_flags(step))
        lines.append(f"  {step.stage:<{width}}  {step.source} → {step.sink}  stages.{step.run.__name__}"
                     + (f"  [{flags}]" if flags else ""))
    return "\n".join(lines) + "\n"


def _node(topic: str) -> str:
    return "t_" + topic.replace(".", "_")


def flow_mermaid() -> str:
    """A left-to-right flowchart: topics as rounded boxes, stages as boxes, refusals and alerts as dotted edges."""
    from ..flow import FLOW

    topics = list(dict.fromkeys(t for step in FLOW for t in (step.source, step.sink)))
    lines = ["flowchart LR"]
    lines += [f"    {_node(t)}([{t}])" for t in topics + [DEAD_LETTERS, ALERTS]]
    lines += [f"    s_{step.stage}[{step.stage}]" for step in FLOW]
    for step in FLOW:
        lines.append(f"    {_node(step.source)} --> s_{step.stage} --> {_node(step.sink)}")
    for step in FLOW:
        lines.append(f"    s_{step.stage} -. refused .-> {_node(DEAD_LETTERS)}")
    for step in FLOW:
        if step.counts_fallback:
            lines.append(f"    s_{step.stage} -. fallback rate .-> {_node(ALERTS)}")
    return "\n".join(lines) + "\n"


def cmd_flow(args) -> int:
    print(flow_mermaid() if args.mermaid else flow_text(), end="")
    return 0
