"""Pictures with nothing but NumPy: terminal drawings (readable without colour) and standalone SVG files.

    print(mask_grid(causal_mask, "我 喜欢 猫 睡 在 沙发 上".split()))
    print(heatmap(attention[0, head], tokens, tokens, title=f"layer 0, head {head}"))
    save_svg("out/attention.svg", heatmap_svg(attention[0, head], tokens, tokens))
    save_svg("out/loss.svg", line_chart_svg({"loss": (steps, losses)}, "training", "step", "loss"))

`head_kinds.py` measures which heads attend to the previous or next token, [SEP], [CLS], or broadly.
`html_page.py` makes one self-contained HTML page from a template in `templates/` (plain JavaScript that
draws with SVG and canvas) and the data as JSON: the attention explorer and the run reports.
"""

from minibert.viz.svg import dot_plot_svg, heatmap_svg, line_chart_svg, save_svg
from minibert.viz.terminal import heatmap, line_chart, mask_grid, sparkline

__all__ = ["dot_plot_svg", "heatmap", "heatmap_svg", "line_chart", "line_chart_svg", "mask_grid", "save_svg",
           "sparkline"]
