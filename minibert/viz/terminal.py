"""Pictures in the terminal, readable without colour: heatmaps, 0/1 mask grids, sparklines, line charts.

Every function returns a string; print it. Values are shown as Unicode shading, from light to dark:

    ' '  '░'  '▒'  '▓'  '█'      five equal bins of the value range (see `value_scale.py`)

Labels may be Chinese (`我 喜欢 猫 睡 在 沙发 上`): columns are aligned by display width, not by
character count (see `text_width.py`).
"""

import math

import numpy as np

from minibert.viz.inputs import as_matrix, checked_labels, finite_points
from minibert.viz.text_width import display_width, pad_left, pad_right
from minibert.viz.value_scale import to_unit_interval, value_range_of

SHADES = " ░▒▓█"
SPARKS = "▁▂▃▄▅▆▇█"
MARKERS = "*o+x#@"


def shade(fraction):
    """The shading character for a value at `fraction` of the way up the scale; '?' for NaN."""
    if math.isnan(fraction):
        return "?"
    return SHADES[min(len(SHADES) - 1, int(fraction * len(SHADES)))]


def heatmap(matrix, row_labels=None, col_labels=None, title=None, value_range=None):
    """A matrix drawn with one shaded cell per entry, labelled rows and columns, and a legend line.

    A cell is as wide as its column label (at least two columns, so cells look square); a full block
    '█' marks the top fifth of the scale and a blank the bottom fifth.
    """
    values = as_matrix(matrix)
    low, high = value_range_of(values, value_range)
    fractions = to_unit_interval(values, low, high)
    widths = _column_widths(values.shape[1], col_labels, minimum=2)
    rows = [[shade(fraction) * width for fraction, width in zip(row, widths, strict=True)]
            for row in fractions]
    lines = [title] if title else []
    lines += _grid_lines(rows, checked_labels(row_labels, values.shape[0], "row"), col_labels, widths)
    step = (high - low) / len(SHADES)
    lines.append("scale: " + "  ".join(f"'{char}'≥{low + i * step:.3g}" for i, char in enumerate(SHADES))
                 + f" (max {high:.3g})")
    return "\n".join(lines)


def mask_grid(mask, labels):
    """A 0/1 mask printed as the course's article draws it: tokens across the top and down the side.

    Row i says which positions token i may attend to (1) or not (0); `mask_grid(causal, tokens)` shows
    GPT's lower triangle, an all-ones mask shows BERT.
    """
    values = as_matrix(mask)
    if not np.isin(values, (0, 1)).all():
        raise ValueError("mask_grid draws 0/1 masks only; draw other values with heatmap()")
    labels = checked_labels(labels, values.shape[0], "row")
    checked_labels(labels, values.shape[1], "column")
    widths = _column_widths(values.shape[1], labels, minimum=1)
    rows = [[str(int(value)) for value in row] for row in values]
    return "\n".join(_grid_lines(rows, labels, labels, widths))


def sparkline(values, width=None):
    """A curve in one line of '▁▂▃▄▅▆▇█', lowest value to highest; NaN shows as a space.

    With `width`, a longer series is averaged in `width` consecutive chunks first.
    """
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if width is not None and values.size > width:
        values = np.array([np.mean(chunk) for chunk in np.array_split(values, width)])
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return " " * values.size
    low, high = float(finite.min()), float(finite.max())
    scale = (len(SPARKS) - 1) / (high - low) if high > low else 0.0
    return "".join(SPARKS[int(round((value - low) * scale))] if np.isfinite(value) else " "
                   for value in values)


def line_chart(series, width=60, height=12, title=None):
    """Curves on a character grid: `series` maps a name to (xs, ys); each gets a marker from MARKERS.

    The y axis shows the lowest and highest value, the x axis the first and last x; non-finite points are
    left out. Meant for a quick look at loss or learning-rate curves; `svg.line_chart_svg` draws them well.
    """
    points = {name: finite_points(name, xs, ys) for name, (xs, ys) in series.items()}
    if len(points) > len(MARKERS):
        raise ValueError(f"line_chart draws at most {len(MARKERS)} series, got {len(points)}")
    all_x = np.concatenate([xs for xs, _ in points.values()])
    all_y = np.concatenate([ys for _, ys in points.values()])
    if all_x.size == 0:
        raise ValueError("line_chart got no finite points to draw")
    x_low, x_high, y_low, y_high = all_x.min(), all_x.max(), all_y.min(), all_y.max()
    grid = [[" "] * width for _ in range(height)]
    for marker, (xs, ys) in zip(MARKERS, points.values(), strict=False):
        columns = _to_cells(xs, x_low, x_high, width)
        rows = height - 1 - _to_cells(ys, y_low, y_high, height)
        for row, column in zip(rows, columns, strict=True):
            grid[row][column] = marker
    top, bottom = f"{y_high:.4g}", f"{y_low:.4g}"
    margin = max(len(top), len(bottom))
    lines = [title] if title else []
    for row_index, row in enumerate(grid):
        label = top if row_index == 0 else bottom if row_index == height - 1 else ""
        tick = "┤" if label else "│"
        lines.append((pad_left(label, margin) + " " + tick + "".join(row)).rstrip())
    lines.append(" " * margin + " └" + "─" * width)
    first, last = f"{x_low:.4g}", f"{x_high:.4g}"
    lines.append(" " * (margin + 2) + first + " " * max(1, width - len(first) - len(last)) + last)
    lines.append(" " * (margin + 2) + "   ".join(f"{marker} {name}" for marker, name in zip(MARKERS, points,
                                                                                             strict=False)))
    return "\n".join(lines)


def _to_cells(values, low, high, count):
    """Positions 0..count-1 for values between low and high (the middle when low == high)."""
    if high == low:
        return np.full(values.shape, count // 2, dtype=np.int64)
    return np.rint((values - low) / (high - low) * (count - 1)).astype(np.int64)


def _column_widths(count, col_labels, minimum):
    labels = checked_labels(col_labels, count, "column")
    if labels is None:
        return [minimum] * count
    return [max(minimum, display_width(label)) for label in labels]


def _grid_lines(rows, row_labels, col_labels, widths):
    """Cells left-aligned in columns of `widths`, one space apart, under the column labels and right of
    the row labels; trailing spaces are dropped."""
    label_width = max(display_width(label) for label in row_labels) if row_labels else 0
    indent = " " * (label_width + 1) if row_labels else ""
    lines = []
    if col_labels is not None:
        lines.append(indent + _join_cells(col_labels, widths))
    for i, cells in enumerate(rows):
        label = pad_right(row_labels[i], label_width) + " " if row_labels else ""
        lines.append(label + _join_cells(cells, widths))
    return [line.rstrip() for line in lines]


def _join_cells(cells, widths):
    return " ".join(pad_right(str(cell), width) for cell, width in zip(cells, widths, strict=True))
