"""``citestream eval``: run golden sets through the pipeline, score, gate, write the report and the plots."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .gates import evaluate_gates
from .run_report import EvalReport, SetReport, compare, load_json, render, write_json
from .score import breakdown, fetch_chunk_texts, metrics, score_item
from .sets import DEFAULT_SETS, GoldenItem, load_set, set_name


def role_of(items: Sequence[GoldenItem]) -> str:
    """A qa-v2 split (its items say direct / reworded) is gated as ``qa-v2``, a set of perturbations as
    ``perturb``, anything else as ``baseline``."""
    if any(i.kind for i in items):
        return "qa-v2"
    return "perturb" if any(i.perturbation for i in items) else "baseline"


def score_set(name: str, items: Sequence[GoldenItem], replies, engine) -> SetReport:
    chunk_ids = [s.chunk_id for answer, _ in replies.values() for s in answer.sentences]
    texts = fetch_chunk_texts(engine, chunk_ids)
    results = []
    for item in items:
        answer, latency = replies.get(item.id) or (None, None)
        results.append(score_item(item, answer, texts, latency))
    return SetReport(name=name, role=role_of(items), metrics=metrics(results),
                     per_category=breakdown(results, "category"), per_perturbation=breakdown(results, "perturbation"),
                     items=results)


def evaluate(set_paths: Sequence[Path], through: str, timeout_s: float | None = None) -> EvalReport:
    """Run and score every set; the gates are those of the roles present."""
    from ..deps import get_deps
    from .run import run_inprocess, run_kafka

    deps = get_deps()
    sets: dict[str, SetReport] = {}
    versions: tuple[str | None, str | None] = (None, None)
    for path in set_paths:
        items = load_set(path)
        replies = run_kafka(items, timeout_s, deps.settings) if through == "kafka" else run_inprocess(items, deps)
        sets[set_name(path)] = score_set(set_name(path), items, replies, deps.engine)
        for answer, _ in replies.values():
            versions = (answer.policy_version, answer.index_version)
            break
    gates = evaluate_gates({name: (s.role, s.metrics) for name, s in sets.items()})
    return EvalReport(through=through, policy_version=versions[0], index_version=versions[1], sets=sets, gates=gates)


def calibration_plots(report: EvalReport, out: Path) -> list[Path]:
    """One calibration PNG per set: the share right per score bin beside the labels' thresholds."""
    from ..config import get_settings
    from ..deps import policy_from_settings
    from .calibration import plot_calibration

    policy = policy_from_settings(get_settings()).relevance  # the thresholds in force, overrides included
    thresholds = {"High": policy.high_confidence, "Medium": policy.answer_threshold}
    return [plot_calibration(name, s.items, out / f"eval-{report.through}-{name}-calibration.png", thresholds)
            for name, s in report.sets.items()]


def confidence_table(report: EvalReport) -> str:
    """How often each label was right, per set, and the share of answerable questions answered right and High."""
    from .calibration import label_table

    lines = ["", "confidence: answers right / given per label; right and High / answerable"]
    for name, s in report.sets.items():
        t = label_table(s.items)
        lines.append(f"  {name:24s} " + "  ".join(f"{k} {t[k]['right']}/{t[k]['answers']}" for k in t)
                     + f"  High covers {t['High']['coverage']:.2f}")
    return "\n".join(lines)


def cmd_eval(args) -> int:
    """Exit 0 when every gate passes, 1 on a breach (unless --no-gates), 2 on a usage error."""
    if args.compare:
        old, new = (load_json(p) for p in args.compare)
        print(compare(old, new), end="")
        return 0
    paths = [Path(p) for p in args.set] if args.set else list(DEFAULT_SETS)
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"no such set: {', '.join(missing)}", file=sys.stderr)
        return 2
    report = evaluate(paths, args.through, args.timeout)
    out = Path(args.out)
    json_path = write_json(report, out / f"eval-{args.through}.json")
    from .plot import plot_set

    pngs = [plot_set(s, out / f"eval-{args.through}-{name}.png") for name, s in report.sets.items()]
    pngs += calibration_plots(report, out)
    print(render(report))
    print(confidence_table(report))
    print(f"\nreport: {json_path}\nplots: {', '.join(map(str, pngs))}")
    if args.no_gates:
        return 0
    return 0 if report.gates_passed else 1
