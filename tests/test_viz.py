"""Tests for minibert.viz: terminal heatmaps, mask grids, sparklines and line charts; SVG heatmaps and charts.

Expected pictures are written out by hand; SVG output is parsed with xml.etree to prove it is well formed.
"""

import unicodedata
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert.errors import ShapeError
from minibert.viz import heatmap, heatmap_svg, line_chart, line_chart_svg, mask_grid, save_svg, sparkline
from minibert.viz.svg import escape, fill_color, nice_ticks

SVG = "{http://www.w3.org/2000/svg}"
SEED_TOKENS = "我 喜欢 猫 睡 在 沙发 上".split()


def test_heatmap_two_by_two_drawn_by_hand():
    """[[0, 0.25], [0.5, 1]] on the scale [0, 1]: five equal bins give ' ', '░', '▒', '█'; cells are two
    columns wide, one space apart, under their labels, and a legend line gives each shade's lower end."""
    picture = heatmap([[0.0, 0.25], [0.5, 1.0]], ["a", "b"], ["x", "y"], value_range=(0, 1))
    assert picture == (
        "  x  y\n"
        "a    ░░\n"
        "b ▒▒ ██\n"
        "scale: ' '≥0  '░'≥0.2  '▒'≥0.4  '▓'≥0.6  '█'≥0.8 (max 1)"
    )


def test_heatmap_of_identity_is_a_diagonal_of_full_blocks():
    """Without labels, row i of the 4x4 identity is 3·i blanks then '██' (each cell 2 wide plus 1 space)."""
    lines = heatmap(np.eye(4), title="identity").split("\n")
    assert lines[0] == "identity"
    assert lines[1:5] == ["██", "   ██", "      ██", "         ██"]


def test_heatmap_default_scale_starts_at_zero_and_marks_nan():
    """By default the scale runs from 0 to the largest value, so [2, 4] is half-shaded and full; a NaN is
    drawn as '?'; a negative value stretches the scale below 0."""
    assert heatmap([[2.0, 4.0]]).split("\n")[0] == "▒▒ ██"
    assert heatmap([[np.nan, 1.0]]).split("\n")[0] == "?? ██"
    assert heatmap([[-1.0, 1.0]]).split("\n")[0] == "   ██"


def test_heatmap_cells_widen_to_cjk_labels():
    """A column labelled 沙发 (4 terminal columns) gets 4-column cells; the row label column is as wide as
    the widest row label."""
    picture = heatmap([[1.0, 0.0], [0.0, 1.0]], ["猫", "沙发"], ["猫", "沙发"])
    assert picture.split("\n")[:3] == [
        "     猫 沙发",
        "猫   ██",
        "沙发    ████",
    ]


def test_mask_grid_matches_the_seed_drawing():
    """The causal mask over 我 喜欢 猫 prints as the seed draws it: 1 where a token may look, labels on top
    and down the side, values under the first column of their label."""
    assert mask_grid(np.tril(np.ones((3, 3), dtype=int)), SEED_TOKENS[:3]) == (
        "     我 喜欢 猫\n"
        "我   1  0    0\n"
        "喜欢 1  1    0\n"
        "猫   1  1    1"
    )


def terminal_columns(char):
    """Written out for the test: CJK ideographs take two terminal columns, combining accents none."""
    if "\u4e00" <= char <= "\u9fff":
        return 2
    return 0 if unicodedata.combining(char) else 1


def column_starts(line, count):
    """Display columns where the last `count` space-separated fields of `line` start."""
    starts, column, previous = [], 0, " "
    for char in line:
        if char != " " and previous == " ":
            starts.append(column)
        column += terminal_columns(char)
        previous = char
    return starts[-count:]


@given(st.lists(st.text(alphabet="ab#猫沙发é\u0301", min_size=1, max_size=4), min_size=1, max_size=6))
def test_mask_grid_columns_line_up_for_any_labels(labels):
    """For any mix of ASCII, CJK and accented labels, every value sits at the display column where its
    label starts in the header (alignment by east-Asian width, not by character count)."""
    size = len(labels)
    lines = mask_grid(np.ones((size, size)), labels).split("\n")
    header = column_starts(lines[0], size)
    for line in lines[1:]:
        assert column_starts(line, size) == header


def test_mask_grid_refuses_non_binary_values_and_wrong_label_counts():
    """mask_grid draws only 0/1 matrices and needs one label per row and column."""
    with pytest.raises(ValueError, match="0/1"):
        mask_grid([[0.5]], ["a"])
    with pytest.raises(ShapeError, match="2 row labels"):
        mask_grid(np.eye(3), ["a", "b"])
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        heatmap([1.0, 2.0, 3.0])


def test_sparkline_levels_downsampling_and_gaps():
    """0..7 climbs through all eight levels; a 4-point series squeezed to width 2 averages pairs; NaN is a
    gap; a flat series is a flat line."""
    assert sparkline(range(8)) == "▁▂▃▄▅▆▇█"
    assert sparkline([0, 0, 7, 7], width=2) == "▁█"
    assert sparkline([0, np.nan, 1]) == "▁ █"
    assert sparkline([3, 3, 3]) == "▁▁▁"


def test_line_chart_drawn_by_hand():
    """Three points on the diagonal of a 3x3 grid, with the y range on the left, the x range below and a
    legend line."""
    assert line_chart({"up": ([0, 1, 2], [0, 1, 2])}, width=3, height=3) == (
        "2 ┤  *\n"
        "  │ *\n"
        "0 ┤*\n"
        "  └───\n"
        "   0 2\n"
        "   * up"
    )


def test_line_chart_refuses_mismatched_series():
    """xs and ys of different lengths name the series."""
    with pytest.raises(ShapeError, match="'loss' has 3 x values but 2 y values"):
        line_chart({"loss": ([0, 1, 2], [1.0, 2.0])})


def svg_cells(svg):
    root = ET.fromstring(svg)
    return root, [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == "cell"]


def luminance(fill):
    red, green, blue = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def test_heatmap_svg_is_well_formed_with_one_rect_per_cell_in_row_order():
    """The SVG parses as XML; it has one cell rect per matrix entry, laid out row by row; the identity's
    diagonal gets the darkest colour and the rest white."""
    root, cells = svg_cells(heatmap_svg(np.eye(3), ["a", "b", "c"], ["x", "y", "z"], title="identity"))
    assert root.tag == f"{SVG}svg"
    assert len(cells) == 9
    positions = [(float(cell.get("y")), float(cell.get("x"))) for cell in cells]
    assert positions == sorted(positions)
    fills = np.array([cell.get("fill") for cell in cells]).reshape(3, 3)
    assert (np.diag(fills) == "#08306b").all()
    assert (fills[~np.eye(3, dtype=bool)] == "#ffffff").all()


@given(st.lists(st.floats(0, 1), min_size=2, max_size=12))
def test_heatmap_svg_darker_means_larger(values):
    """For any row of values, ordering the cells by value orders their fills from light to dark
    (luminance never increases as the value grows)."""
    _, cells = svg_cells(heatmap_svg([values], value_range=(0, 1)))
    order = np.argsort(values, kind="stable")
    lightness = [luminance(cells[i].get("fill")) for i in order]
    assert all(later <= earlier for earlier, later in zip(lightness, lightness[1:], strict=False))


def test_svg_escapes_labels_and_keeps_cjk():
    """Labels with < > & quotes, a control character and Chinese stay well-formed XML and read back
    unchanged (the control character as U+FFFD); no raw '<unk>' tag appears in the text."""
    labels = ["<unk>", "R&D", "\"q'", "沙发\x01"]
    svg = heatmap_svg(np.ones((4, 4)), labels, labels, title="a < b & c")
    root, _ = svg_cells(svg)
    texts = [element.text for element in root.iter(f"{SVG}text")]
    for label in ["<unk>", "R&D", "\"q'", "沙发\ufffd", "a < b & c"]:
        assert label in texts
    assert "<unk>" not in svg
    assert escape("<a & 'b'>") == "&lt;a &amp; &#39;b&#39;&gt;"


def test_fill_color_endpoints():
    """The colour ramp runs from white at 0 to dark blue (8, 48, 107) at 1, halfway at 0.5."""
    assert fill_color(0.0) == "#ffffff"
    assert fill_color(1.0) == "#08306b"
    assert fill_color(0.5) == "#8498b5"  # (255+8)/2 = 131.5 -> 132 = 0x84, 151.5 -> 152 = 0x98, 181 = 0xb5


def test_line_chart_svg_polylines_match_the_data():
    """One series polyline per curve, with one point per finite data point (a NaN is left out), every point
    inside the plot, x growing rightwards and larger y higher up (smaller pixel y)."""
    steps = np.arange(10.0)
    loss = 5 / (steps + 1)
    loss[4] = np.nan
    svg = line_chart_svg({"loss": (steps, loss), "lr <peak>": (steps[:3], [0.0, 1e-4, 5e-5])},
                         title="run & curves", x_label="step", y_label="loss")
    root = ET.fromstring(svg)
    lines = [line for line in root.iter(f"{SVG}polyline") if line.get("class") == "series"]
    assert [line.find(f"{SVG}title").text for line in lines] == ["loss", "lr <peak>"]
    points = [np.array([pair.split(",") for pair in line.get("points").split()], dtype=float)
              for line in lines]
    assert [len(p) for p in points] == [9, 3]
    width, height = float(root.get("width")), float(root.get("height"))
    for p in points:
        assert ((p[:, 0] >= 0) & (p[:, 0] <= width) & (p[:, 1] >= 0) & (p[:, 1] <= height)).all()
        assert (np.diff(p[:, 0]) > 0).all()
    assert (np.diff(points[0][:, 1]) > 0).all()  # the loss falls, so its pixel y grows


def test_nice_ticks_by_hand():
    """Ticks fall on round numbers covering the range: [0, 1] in steps of 0.2, [0.13, 0.87] too, and
    [0, 2571] in steps of 1000 (514 is above 500, so the step rounds up to 1000)."""
    np.testing.assert_allclose(nice_ticks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1.0])
    np.testing.assert_allclose(nice_ticks(0.13, 0.87), [0, 0.2, 0.4, 0.6, 0.8, 1.0])
    np.testing.assert_allclose(nice_ticks(0, 2571), [0, 1000, 2000, 3000])


def test_save_svg_writes_atomically(tmp_path):
    """save_svg creates the folder, writes the text, and leaves no temporary file; a failed write leaves the
    previous picture intact."""
    path = tmp_path / "pictures" / "attention.svg"
    svg = heatmap_svg(np.eye(2), ["猫", "狗"], ["猫", "狗"])
    assert save_svg(path, svg) == path
    assert path.read_text(encoding="utf-8") == svg
    with pytest.raises(TypeError):
        save_svg(path, 42)
    assert path.read_text(encoding="utf-8") == svg
    assert [entry.name for entry in path.parent.iterdir()] == ["attention.svg"]
