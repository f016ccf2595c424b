"""The ladder's picture: accuracy (test, or dev in a record made before the protocol) against labelled
examples a class, one line per rung (the mean over the seeds), one panel per task and way (fine-tuned,
linear probe, probe then fine-tuned). The x axis is logarithmic, as the sizes 30, 100, 300 are; "all" sits
where its count falls."""

import math

import numpy as np

from minibert.experiments.ladder_arms import RUNGS, WAYS, arm_name
from minibert.experiments.ladder_table import ladder_cells, with_protocol
from minibert.viz.svg import line_chart_svg, panels_svg, save_svg


def panel_lines(record, cells, task, way):
    """{line name: (examples a class, mean accuracy)} of one panel: arrays in size order, the sizes that
    have finished runs only; `cells` are ladder_table.ladder_cells(record). An arm with a run that learned
    nothing (ladder_tuning.py) leaves its rung's line and is drawn apart, as "<rung>: learned nothing"."""
    settings, lines = record["settings"], {}
    for rung in settings["rungs"]:
        points = {"learned": [], "nothing": []}
        for size in settings["sizes"]:
            runs = [run for run in record["runs"] if run["arm"] == arm_name(rung, task, way, size)]
            if runs:
                cell = cells[(task, way, size, rung)]
                points["learned" if cell.learned == cell.n else "nothing"].append(
                    (runs[0]["metrics"]["per_class"], cell.mean))
        for kind, name in (("learned", RUNGS[rung]), ("nothing", f"{RUNGS[rung]}: learned nothing")):
            if points[kind]:
                lines[name] = tuple(np.array(values, dtype=float) for values in zip(*points[kind], strict=True))
    return lines


def ladder_svg(record):
    """The picture of a ladder results record (results.py's results_record), as an SVG string."""
    charts, columns, cells = [], 1, ladder_cells(record)
    y_label = "test accuracy (%)" if with_protocol(record) else "dev accuracy (%)"
    for task in record["settings"]["tasks"]:
        panels = {way: panel_lines(record, cells, task, way) for way in WAYS}
        # the sizes of both ways on each panel's axis, so that the two panels of a task line up
        counts = sorted({count for lines in panels.values() for xs, _ in lines.values() for count in xs})
        ticks = {math.log10(count): f"{count:g}" for count in counts}
        columns = max(columns, sum(1 for lines in panels.values() if lines))
        for way, lines in panels.items():
            if not lines:
                continue
            charts.append(line_chart_svg({name: (np.log10(xs), ys) for name, (xs, ys) in lines.items()},
                                         title=f"{task}, {WAYS[way]}", x_label="labelled examples a class",
                                         y_label=y_label, width=560, height=340, x_ticks=ticks,
                                         markers=True))
    if not charts:
        raise ValueError("the ladder has no finished runs to draw yet")
    return panels_svg(charts, columns=columns)  # a task's ways side by side


def draw_ladder(path, record):
    """Write the picture of `record` to `path`; returns the path."""
    return save_svg(path, ladder_svg(record))
