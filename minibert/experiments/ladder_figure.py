"""The ladder's picture: accuracy (test, or dev in a record made before the protocol) against labelled
examples a class, one line per rung (the mean over the seeds), one panel per task and way (fine-tuned,
linear probe, probe then fine-tuned). The sizes 30, 100 and 300 sit evenly spaced, as they nearly are on a
log scale, and "all" last, labelled with its count (334 a class sits too close to 300 to read at its own
place). Each rung keeps its colour and dash on every panel and in every picture; an arm with a run that
learned nothing is drawn apart in its rung's colour, thin and finely dotted."""

import numpy as np

from minibert.experiments.ladder_arms import RUNGS, WAYS, parse_arm
from minibert.experiments.ladder_table import ladder_cells, with_protocol
from minibert.viz.svg import COLORS, DASHES, line_chart_svg, panels_svg, save_svg

LEARNED_NOTHING = ("1 3", 1)  # the dash and width of a line that learned nothing: thin, finely dotted


def rung_styles():
    """{line name: (colour, dash, width)}: each rung's look, by its place among all the rungs (so the same on
    every panel and in every record's picture), and its "learned nothing" line's."""
    styles = {}
    for index, rung in enumerate(RUNGS):
        color = COLORS[index % len(COLORS)]
        styles[RUNGS[rung]] = (color, DASHES[index % len(DASHES)], 2)
        styles[f"{RUNGS[rung]}: learned nothing"] = (color, *LEARNED_NOTHING)
    return styles


def panel_lines(record, cells, task, way):
    """{line name: (the sizes' places on the x axis, mean accuracy)} of one panel: arrays in size order, the
    sizes that have finished runs only; `cells` are ladder_table.ladder_cells(record). An arm with a run that
    learned nothing (ladder_tuning.py) leaves its rung's line and is drawn apart, as "<rung>: learned
    nothing"."""
    settings, lines = record["settings"], {}
    for rung in settings["rungs"]:
        points = {"learned": [], "nothing": []}
        for place, size in enumerate(settings["sizes"]):
            key = (task, way, size, rung)
            if key in cells:
                points["learned" if cells[key].learned == cells[key].n else "nothing"].append((place, cells[key].mean))
        for kind, name in (("learned", RUNGS[rung]), ("nothing", f"{RUNGS[rung]}: learned nothing")):
            if points[kind]:
                lines[name] = tuple(np.array(values, dtype=float) for values in zip(*points[kind], strict=True))
    return lines


def size_labels(record, task):
    """{place on the x axis: label} of `task`'s sizes: "30", "100", "300", and "all (334)", its examples a
    class (a pair task's two classes may differ by one: their mean, rounded)."""
    labels = {}
    for place, size in enumerate(record["settings"]["sizes"]):
        labels[float(place)] = size
        if size == "all":
            counts = [run["metrics"]["per_class"] for run in record["runs"]
                      if parse_arm(run["arm"])[1::2] == (task, "all")]
            labels[float(place)] = f"all ({round(counts[0]):,})" if counts else "all"
    return labels


def ladder_svg(record):
    """The picture of a ladder results record (results.py's results_record), as an SVG string."""
    charts, columns, cells = [], 1, ladder_cells(record)
    y_label = "test accuracy (%)" if with_protocol(record) else "dev accuracy (%)"
    styles = rung_styles()
    for task in record["settings"]["tasks"]:
        panels = {way: panel_lines(record, cells, task, way) for way in WAYS}
        ticks = size_labels(record, task)  # every size on each panel's axis, so that a task's panels line up
        columns = max(columns, sum(1 for lines in panels.values() if lines))
        for way, lines in panels.items():
            if not lines:
                continue
            charts.append(line_chart_svg(lines, title=f"{task}, {WAYS[way]}", x_label="labelled examples a class",
                                         y_label=y_label, width=640, height=340, x_ticks=ticks, markers=True,
                                         styles=styles))
    if not charts:
        raise ValueError("the ladder has no finished runs to draw yet")
    return panels_svg(charts, columns=columns)  # a task's ways side by side


def draw_ladder(path, record):
    """Write the picture of `record` to `path`; returns the path."""
    return save_svg(path, ladder_svg(record))
