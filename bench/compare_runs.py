"""Held-out curves of several pretraining runs side by side: a table per evaluation step, and one SVG each
for masked-LM and NSP accuracy.

    python3 bench/compare_runs.py base=/tmp/run-a sinusoidal=/tmp/run-b --svg docs/figures/levers

Each argument is NAME=RUN_FOLDER (a folder with the log.jsonl that `pretrain` and bench/learning_curve.py
write). The table shows the held-out MLM / NSP accuracy at every evaluation of each run.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minibert.train.logs import read_log  # noqa: E402
from minibert.viz.svg import line_chart_svg, save_svg  # noqa: E402


def held_out(folder):
    """{step: (MLM accuracy, NSP accuracy)} of a run's evaluations."""
    return {record["step"]: (record["mlm_accuracy"], record.get("nsp_accuracy"))
            for record in read_log(Path(folder) / "log.jsonl") if record["kind"] == "eval"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", metavar="NAME=FOLDER")
    parser.add_argument("--svg", default=None, help="write PREFIX-mlm.svg and PREFIX-nsp.svg")
    args = parser.parse_args()
    curves = {}
    for argument in args.runs:
        name, _, folder = argument.partition("=")
        curves[name] = held_out(folder)
    steps = sorted({step for curve in curves.values() for step in curve})
    width = max(len(name) for name in curves)
    print(f"held-out MLM / NSP accuracy at each evaluation step (128-token sequences)\n{'step':>{width}}"
          + "".join(f"{step:>14}" for step in steps))
    for name, curve in curves.items():
        cells = [f"{curve[s][0]:6.1%} /{curve[s][1]:6.1%}" if s in curve and curve[s][1] is not None
                 else f"{curve[s][0]:6.1%}        " if s in curve else " " * 14 for s in steps]
        print(f"{name:>{width}}" + "".join(f"{cell:>14}" for cell in cells))
    if args.svg:
        for index, label in enumerate(("MLM", "NSP")):
            series = {name: ([s for s in sorted(curve) if curve[s][index] is not None],
                             [curve[s][index] for s in sorted(curve) if curve[s][index] is not None])
                      for name, curve in curves.items()}
            svg = line_chart_svg(series, title=f"held-out {label} accuracy", x_label="step", y_label="accuracy")
            print(f"wrote {save_svg(Path(f'{args.svg}-{label.lower()}.svg'), svg)}")


if __name__ == "__main__":
    main()
