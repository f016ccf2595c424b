"""Standalone SVG pictures with no plotting library: heatmaps, line charts and dot plots.

An SVG file is XML text: shapes (`<rect>`, `<polyline>`, `<text>`) placed in pixel coordinates, with y
growing downwards. Any browser opens it. Every function here returns the SVG as a string; `save_svg`
writes it to a file atomically, so a picture is never left half-written.

Labels go through `escape`, so tokens such as `<unk>`, `R&D` or `[MASK]` and Chinese text stay valid XML.
Line charts tell series apart by dash pattern as well as by colour, so they read in grey print too.
"""

import math
import os
import pathlib
import re

import numpy as np

from minibert.surrogates import shown
from minibert.viz.inputs import as_matrix, checked_labels, finite_points
from minibert.viz.text_width import display_width
from minibert.viz.value_scale import to_unit_interval, value_range_of

FONT_SIZE = 12
TITLE_SIZE = 15
LIGHTEST = (255, 255, 255)  # the heatmap colour of the bottom of the scale...
DARKEST = (8, 48, 107)  # ...and of the top: one hue, so darker always means larger
MISSING_FILL = "#d9d9d9"  # NaN cells
GRID_COLOR = "#e5e5e5"
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
DASHES = ("", "8 4", "2 3", "10 3 2 3", "5 5", "1 2")

# Characters XML 1.0 does not allow at all (most control characters, U+FFFE/U+FFFF; lone surrogates, too,
# which `shown` writes out first).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def escape(text):
    """`text` made safe inside an XML element or attribute: & < > " ' as entities, a byte that is not UTF-8
    (a lone surrogate) shown as `\\xff` (minibert/surrogates.py), other forbidden characters replaced by
    U+FFFD."""
    text = _NOT_XML.sub("\ufffd", shown(str(text)))
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def fill_color(fraction):
    """The heatmap colour "#rrggbb" at `fraction` (0 to 1) of the way from LIGHTEST to DARKEST."""
    if math.isnan(fraction):
        return MISSING_FILL
    channels = (round(light + (dark - light) * fraction)
                for light, dark in zip(LIGHTEST, DARKEST, strict=True))
    return "#" + "".join(f"{channel:02x}" for channel in channels)


def heatmap_svg(matrix, row_labels=None, col_labels=None, title=None, value_range=None, cell_size=24):
    """A matrix as a grid of coloured squares (darker = larger), with labels, a title and a colour bar.

    Each cell is a `<rect class="cell">` whose tooltip gives its row, column and value. Column labels are
    written upwards so that long tokens fit.
    """
    values = as_matrix(matrix)
    rows, cols = values.shape
    row_labels = checked_labels(row_labels, rows, "row")
    col_labels = checked_labels(col_labels, cols, "column")
    low, high = value_range_of(values, value_range)
    fractions = to_unit_interval(values, low, high)

    left = 10 + (max(_text_px(label) for label in row_labels) + 6 if row_labels else 0)
    top = 10 + (24 if title else 0) + (max(_text_px(label) for label in col_labels) + 6 if col_labels else 0)
    grid_bottom = top + rows * cell_size
    bar_width = max(120, min(240, cols * cell_size))
    width = max(left + max(cols * cell_size, bar_width), 10 + _text_px(title or "", TITLE_SIZE)) + 10
    height = grid_bottom + 50
    parts = [_open_svg(width, height)]
    if title:
        parts.append(_title(10, title))
    for j, label in enumerate(col_labels or []):
        x, y = left + (j + 0.5) * cell_size + FONT_SIZE / 3, top - 6
        parts.append(f'<text transform="translate({x:.1f},{y}) rotate(-90)">{escape(label)}</text>')
    for i, label in enumerate(row_labels or []):
        y = top + (i + 0.5) * cell_size + FONT_SIZE / 3
        parts.append(f'<text x="{left - 6}" y="{y:.1f}" text-anchor="end">{escape(label)}</text>')
    row_names = row_labels or [f"row {i}" for i in range(rows)]
    col_names = col_labels or [f"column {j}" for j in range(cols)]
    fraction_rows, value_rows = fractions.tolist(), values.tolist()  # Python floats: NumPy's scalars are slow
    for i in range(rows):
        for j in range(cols):
            where = f"{row_names[i]}, {col_names[j]}"
            parts.append(f'<rect class="cell" x="{left + j * cell_size}" y="{top + i * cell_size}" '
                         f'width="{cell_size}" height="{cell_size}" fill="{fill_color(fraction_rows[i][j])}">'
                         f"<title>{escape(where)}: {value_rows[i][j]:.4g}</title></rect>")
    parts.append(f'<rect x="{left}" y="{top}" width="{cols * cell_size}" height="{rows * cell_size}" '
                 'fill="none" stroke="#999999"/>')
    parts += _colour_bar(left, grid_bottom + 14, bar_width, low, high)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def line_chart_svg(series, title=None, x_label=None, y_label=None, width=640, height=400, x_ticks=None,
                   markers=False, styles=None):
    """Curves on labelled axes: `series` maps a name to (xs, ys), e.g. {"train loss": (steps, losses)}.

    Each series is one `<polyline class="series">` through its finite points (NaN and inf are left out),
    with a legend entry. Axis ticks fall on round numbers, or, on x, at the {position: label} of `x_ticks`
    (e.g. a log scale: {log10(30): "30", log10(100): "100"}). markers: a dot at each point as well
    (`<circle class="point">`, its value as a tooltip), for series of a few points. styles: {name: (color,
    dash, width)} for series that keep one look across several charts; the others take the next of COLORS and
    DASHES, 2 pixels wide.
    """
    points = {name: finite_points(name, xs, ys) for name, (xs, ys) in series.items()}
    if not points or all(xs.size == 0 for xs, _ in points.values()):
        raise ValueError("line_chart_svg got no finite points to draw")
    x_labels = dict(x_ticks or {})
    if len(x_labels) >= 2:
        x_ticks = np.array(sorted(x_labels), dtype=float)
    else:  # none given, or too few to span an axis
        x_labels, x_ticks = {}, nice_ticks(*_span(np.concatenate([xs for xs, _ in points.values()])))
    y_ticks = nice_ticks(*_span(np.concatenate([ys for _, ys in points.values()])))
    legend_width = max(_text_px(name) for name in points) + 40
    left, right = 70, width - 20 - legend_width
    top, bottom = 20 + (24 if title else 0), height - 50

    def x_px(x):
        return left + (x - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (right - left)

    def y_px(y):
        return bottom - (y - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]) * (bottom - top)

    parts = [_open_svg(width, height)]
    if title:
        parts.append(_title(left, title))
    for tick in x_ticks:  # vertical grid lines, labelled under the x axis
        x = x_px(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="{GRID_COLOR}"/>')
        shown = escape(x_labels[tick]) if tick in x_labels else f"{tick:.6g}"
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{shown}</text>')
    for tick in y_ticks:  # horizontal grid lines, labelled left of the y axis
        y = y_px(tick)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID_COLOR}"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.6g}</text>')
    parts.append(f'<polyline points="{left},{top} {left},{bottom} {right},{bottom}" fill="none" '
                 'stroke="#333333"/>')
    if x_label:
        parts.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 12}" text-anchor="middle">'
                     f"{escape(x_label)}</text>")
    if y_label:
        parts.append(f'<text transform="translate(16,{(top + bottom) / 2:.1f}) rotate(-90)" '
                     f'text-anchor="middle">{escape(y_label)}</text>')
    for index, (name, (xs, ys)) in enumerate(points.items()):
        default = (COLORS[index % len(COLORS)], DASHES[index % len(DASHES)], 2)
        color, dash, line_width = (styles or {}).get(name, default)
        style = f'stroke="{color}" stroke-width="{line_width}"' + (f' stroke-dasharray="{dash}"' if dash else "")
        coordinates = " ".join(f"{x:.2f},{y:.2f}" for x, y in zip(x_px(xs), y_px(ys), strict=True))
        parts.append(f'<polyline class="series" points="{coordinates}" fill="none" {style}>'
                     f"<title>{escape(name)}</title></polyline>")
        if markers:
            parts += [f'<circle class="point" cx="{x_px(x):.2f}" cy="{y_px(y):.2f}" r="3.5" fill="{color}">'
                      f"<title>{escape(name)}: {y:.4g}</title></circle>" for x, y in zip(xs, ys, strict=True)]
        legend_y = top + 8 + index * 18
        parts.append(f'<line x1="{right + 15}" y1="{legend_y}" x2="{right + 40}" y2="{legend_y}" {style}/>')
        parts.append(f'<text x="{right + 45}" y="{legend_y + 4}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def dot_plot_svg(panels, title=None, panel_width=260, plot_height=240):
    """Side-by-side panels, one per measure, each with one column of dots per group: every seed's value as
    a dot, the group's mean as a short bar. `panels` maps a panel title to {group name: [values]}, e.g.
    {"dev accuracy (%)": {"80/10/10": [81.0, 83.5, 82.1], "100/0/0": [...]}}.

    Dots are `<circle class="value">` with the value as a tooltip; means are `<line class="mean">`.
    """
    if not panels or not any(values for groups in panels.values() for values in groups.values()):
        raise ValueError("dot_plot_svg got no values to draw")
    # group names are written at 45 degrees under the axis: their height is about 0.71 of their width
    label_room = max(_text_px(name) for groups in panels.values() for name in groups) * 0.71 + 20
    top = 30 + (24 if title else 0)
    bottom = top + plot_height
    height = bottom + label_room
    width = 20 + len(panels) * panel_width
    parts = [_open_svg(width, height)]
    if title:
        parts.append(_title(10, title))
    for index, (name, groups) in enumerate(panels.items()):
        finite = np.array([v for values in groups.values() for v in values if math.isfinite(v)], dtype=float)
        if finite.size == 0:
            continue
        ticks = nice_ticks(*_span(finite))
        left, right = 20 + index * panel_width + 50, 20 + (index + 1) * panel_width - 15

        def y_px(y, ticks=ticks):
            return bottom - (y - ticks[0]) / (ticks[-1] - ticks[0]) * (bottom - top)

        parts.append(f'<text x="{(left + right) / 2:.1f}" y="{top - 10}" text-anchor="middle" '
                     f'font-weight="bold">{escape(name)}</text>')
        for tick in ticks:
            y = y_px(tick)
            parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID_COLOR}"/>')
            parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.6g}</text>')
        parts.append(f'<polyline points="{left},{top} {left},{bottom} {right},{bottom}" fill="none" '
                     'stroke="#333333"/>')
        step = (right - left) / len(groups)
        for column, (group, values) in enumerate(groups.items()):
            x, color = left + (column + 0.5) * step, COLORS[column % len(COLORS)]
            shown = [v for v in values if math.isfinite(v)]
            for offset, value in zip(np.linspace(-step / 6, step / 6, len(shown)) if len(shown) > 1 else [0.0],
                                     shown, strict=False):
                parts.append(f'<circle class="value" cx="{x + offset:.1f}" cy="{y_px(value):.1f}" r="3.5" '
                             f'fill="{color}" fill-opacity="0.7"><title>{escape(group)}: {value:.4g}</title>'
                             "</circle>")
            if shown:
                y = y_px(sum(shown) / len(shown))
                parts.append(f'<line class="mean" x1="{x - step / 3:.1f}" y1="{y:.1f}" x2="{x + step / 3:.1f}" '
                             f'y2="{y:.1f}" stroke="{color}" stroke-width="2.5"/>')
            parts.append(f'<text transform="translate({x + 4:.1f},{bottom + 8}) rotate(45)">{escape(group)}'
                         "</text>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def panels_svg(charts, columns=2):
    """Whole SVG pictures (strings from the functions here) laid out in a grid, `columns` a row, as one
    picture: each becomes a nested `<svg>` placed at its cell."""
    sizes = [tuple(float(value) for value in re.search(r'width="([\d.]+)" height="([\d.]+)"', chart).groups())
             for chart in charts]
    cell_width, cell_height = max(w for w, _ in sizes), max(h for _, h in sizes)
    rows = math.ceil(len(charts) / columns)
    parts = [_open_svg(cell_width * min(columns, len(charts)), cell_height * rows)]
    for index, chart in enumerate(charts):
        x, y = (index % columns) * cell_width, (index // columns) * cell_height
        body = chart.split("?>", 1)[-1].lstrip()  # without its XML declaration
        parts.append(body.replace("<svg ", f'<svg x="{x:.0f}" y="{y:.0f}" ', 1).rstrip())
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def nice_ticks(low, high, count=5):
    """About `count` evenly spaced round numbers (steps of 1, 2, 2.5 or 5 times a power of 10) that cover
    [low, high], the first <= low and the last >= high."""
    raw_step = (high - low) / count
    magnitude = 10.0 ** math.floor(math.log10(raw_step))
    step = next(multiple * magnitude for multiple in (1, 2, 2.5, 5, 10) if multiple * magnitude >= raw_step)
    first, last = math.floor(low / step), math.ceil(high / step)
    return np.arange(first, last + 1) * step


def save_svg(path, svg):
    """Write `svg` to `path` atomically (a temporary file in the same folder, then a rename), creating the
    folder if needed. Returns the path."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(svg)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def _open_svg(width, height):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="{FONT_SIZE}">\n'
            '<rect width="100%" height="100%" fill="white"/>')


def _title(x, text):
    return f'<text x="{x}" y="26" font-size="{TITLE_SIZE}" font-weight="bold">{escape(text)}</text>'


def _colour_bar(x, y, width, low, high):
    """A horizontal gradient from the lightest to the darkest colour, with the scale's two ends."""
    return [
        '<defs><linearGradient id="scale">'
        f'<stop offset="0" stop-color="{fill_color(0.0)}"/><stop offset="1" stop-color="{fill_color(1.0)}"/>'
        "</linearGradient></defs>",
        f'<rect x="{x}" y="{y}" width="{width}" height="10" fill="url(#scale)" stroke="#999999"/>',
        f'<text x="{x}" y="{y + 24}">{low:.3g}</text>',
        f'<text x="{x + width}" y="{y + 24}" text-anchor="end">{high:.3g}</text>',
    ]


def _text_px(text, font_size=FONT_SIZE):
    """Roughly how many pixels `text` takes, as `escape` writes it: 0.6 em per terminal column (a CJK character
    is two)."""
    return display_width(shown(str(text))) * font_size * 0.6


def _span(values):
    """(low, high) of the values, widened when they are all equal so an axis still has a length."""
    low, high = float(values.min()), float(values.max())
    if high == low:
        margin = abs(low) * 0.1 or 1.0
        return low - margin, high + margin
    return low, high
