"""The table an experiment prints: one row per arm, one column per metric, `mean ± std (min-max)`.

    arm            fine-tune dev acc (%)     feature probe acc (%)
    80/10/10       81.2 ± 1.3 (80.0-82.6)    70.1 ± 0.4 (69.7-70.5)
"""

from minibert.viz.text_width import display_width


def cell(summary):
    """`mean ± std (min-max)` with one decimal; a single seed shows its value alone."""
    if summary.std is None:
        return f"{summary.mean:.1f} (1 seed)"
    return f"{summary.mean:.1f} ± {summary.std:.1f} ({summary.low:.1f}-{summary.high:.1f})"


def format_table(summaries, metrics, arm_labels=None):
    """The table as text. summaries: {arm: {metric: Summary}} (summary.py); metrics: {metric: column title};
    arm_labels: {arm: row title} (default: the arm's name)."""
    arm_labels = arm_labels or {}
    rows = [["arm"] + list(metrics.values())]
    for arm, by_metric in summaries.items():
        rows.append([arm_labels.get(arm, arm)] + [cell(by_metric[m]) if m in by_metric else "-" for m in metrics])
    widths = [max(display_width(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(text + " " * (width - display_width(text)) for text, width in zip(row, widths, strict=True))
             .rstrip() for row in rows]
    counts = sorted({s.n for by_metric in summaries.values() for s in by_metric.values()})
    seeds = "/".join(str(n) for n in counts) or "0"
    lines.append(f"mean ± sample standard deviation (min-max) over {seeds} seeds per arm")
    return "\n".join(lines)
