"""Is a confidence label a promise kept? How often each label was right, and the calibration curve, per set.

"Right" is the item's pass: an answered answerable question answered right (cited on an expected page, with its
phrase); an answered unanswerable question is wrong whatever its label. ``make eval`` writes one PNG per set
(``eval-<through>-<set>-calibration.png``): the share right in bins of the best answer sentence's relevance score,
beside the labels' thresholds (``RelevancePolicy.high_confidence`` and ``answer_threshold``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .score import ItemResult

LABELS = ("High", "Medium", "Low")


def answered(items: Sequence[ItemResult]) -> list[ItemResult]:
    return [i for i in items if i.status == "answered"]


def label_table(items: Sequence[ItemResult]) -> dict[str, dict[str, float | int]]:
    """Per label: answers given with it, right among them, the share right; and the right answers labelled High
    as a share of the answerable questions (what the label covers)."""
    out: dict[str, dict[str, float | int]] = {}
    for label in LABELS:
        given = [i for i in answered(items) if i.confidence == label]
        right = sum(i.passed for i in given)
        share = round(right / len(given), 4) if given else 0.0
        out[label] = {"answers": len(given), "right": right, "precision": share}
    answerable = sum(i.answerable for i in items)
    high_right = out["High"]["right"]
    out["High"]["coverage"] = round(high_right / answerable, 4) if answerable else 0.0
    return out


def curve(items: Sequence[ItemResult], bins: int = 10) -> list[tuple[float, float, int, float]]:
    """(bin low, bin high, answers, share right) over the best relevance score of each answered item."""
    scored = [(i.best_relevance, i.passed) for i in answered(items) if i.best_relevance is not None]
    out = []
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [ok for s, ok in scored if lo <= s < hi or (b == bins - 1 and s == 1.0)]
        out.append((lo, hi, len(inside), sum(inside) / len(inside) if inside else float("nan")))
    return out


def wilson_lower(right: int, n: int, z: float) -> float:
    """The Wilson score interval's lower end for ``right`` of ``n``: how low the share right may be on new items
    and still have given this sample (z = 1.28: one-sided 90 %)."""
    if n == 0:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    spread = z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return (centre - spread) / (1 + z * z / n)


def choose_high(scored: Sequence[tuple[float, float | None, bool]], answerable: int, precision: float = 0.9,
                min_answers: int = 15, z: float = 1.28) -> tuple[float, float, int, int] | None:
    """The High rule chosen on dev: over (best score, runner-up score, right) of the answered items, the threshold
    and margin (``RelevancePolicy.high_confidence``, ``high_margin``) covering the most answerable questions whose
    High answers are right at least ``precision`` of the time by the Wilson lower bound at ``z``, not by the share
    seen (a rule picked as the best of a grid on dev is the luckiest on dev: 41 of 45 there was 56 of 66 on unseen
    documents). At least ``min_answers`` High answers. Returns (threshold, margin, answers, right), or None when no
    rule keeps the promise."""
    if not answerable:
        return None
    best = None
    for t in (x / 100 for x in range(50, 100)):
        for m in (x / 100 for x in range(0, 50, 5)):
            high = [ok for s, other, ok in scored if s >= t and (other is None or s - other >= m)]
            right = sum(high)
            if (len(high) >= min_answers and wilson_lower(right, len(high), z) >= precision
                    and (best is None or right > best[3])):
                best = (t, m, len(high), right)
    return best


def plot_calibration(name: str, items: Sequence[ItemResult], path: Path, thresholds: dict[str, float]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = curve(items)
    table = label_table(items)
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    mids = [(lo + hi) / 2 for lo, hi, n, _ in rows if n]
    rates = [r for _, _, n, r in rows if n]
    ax.plot([0, 1], [0, 1], color="#bbbbbb", linestyle="--", linewidth=1, label="score = share right")
    ax.plot(mids, rates, marker="o", color="#3b7dd8", label="share right, per score bin")
    for (lo, hi, n, r) in rows:
        if n:
            ax.annotate(str(n), ((lo + hi) / 2, r), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    for label, t in thresholds.items():
        ax.axvline(t, color="#d0743c" if label == "High" else "#8a63d2", linewidth=1)
        ax.annotate(f"{label} ≥ {t:.2f}", (t, 0.03), rotation=90, fontsize=8, ha="right", va="bottom")
    high, medium = table["High"], table["Medium"]
    ax.set_title(f"{name}: High right {high['right']}/{high['answers']}, Medium {medium['right']}/{medium['answers']}",
                 fontsize=10)
    ax.set_xlabel("best answer sentence's relevance score")
    ax.set_ylabel("answers right")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
