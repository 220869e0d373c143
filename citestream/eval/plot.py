"""A PNG bar chart of pass rate per category (and per perturbation kind) for people who would rather look."""

from __future__ import annotations

from pathlib import Path

from .run_report import SetReport


def plot_set(report: SetReport, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = {**report.per_category, **{f"~{k}": v for k, v in report.per_perturbation.items()}}
    names = list(groups)
    rates = [groups[n]["pass_rate"] for n in names]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(names) + 2), 4.2))
    bars = ax.bar(names, rates, color=["#3b7dd8" if not n.startswith("~") else "#8a63d2" for n in names])
    for bar, n in zip(bars, names):
        ax.annotate(f"{groups[n]['passed']}/{groups[n]['items']}",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("pass rate")
    ax.set_title(f"{report.name}: pass rate per category (overall {report.metrics['pass_rate']:.2f})")
    ax.tick_params(axis="x", labelrotation=40)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")  # set_ha: the same, an alias the stubs do not list
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
