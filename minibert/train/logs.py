"""The run's log, one JSON object per line (JSONL), and the curves drawn from it at the end.

Each line is a record with a "kind": "train" (step, losses, accuracies, lr, grad_norm, tokens_per_second,
...), "eval" (held-out accuracies and losses), "guesses" (what the model fills in a few held-out blanks),
"plan" (a run planned from the clock planning again from its own steps), "start", "resume" or "end" (these
three with the wall-clock time, UTC; the first two with the command that ran); examples in the comment
below.
JSONL survives a crash: every record is a complete line, flushed as it is written, so a killed run leaves
a log that reads up to its last line. Any tool reads it (`pandas.read_json(path, lines=True)`, `jq`).
`draw_curves` turns the log into two SVG pictures with `minibert.viz`: the losses, and the accuracies.
"""

# Records:
#     {"kind": "train", "step": 120, "loss": 6.12, "mlm_loss": 5.43, "nsp_loss": 0.69, "mlm_accuracy": 0.08,
#      "nsp_accuracy": 0.52, "lr": 0.0006, "grad_norm": 1.7, "tokens_per_second": 5900, "elapsed": 80.2, ...}
#     {"kind": "eval", "step": 200, "mlm_accuracy": 0.11, "nsp_accuracy": 0.58, "mlm_loss": ..., ...}
#     {"kind": "guesses", "step": 200, "examples": [{"text": "...", "blanks": [...]}], "unigram": {...}}
#     {"kind": "plan", "step": 250, "total_steps": 1010, "planned": 980, "short_steps": 606,
#      "long_step_seconds": 0.81}
#     {"kind": "start" | "resume" | "end", "time": "2026-12-04T10:00:00Z", "command": "...", ...}
# Python writes floats with `repr`, which reads back as exactly the same number, so two logs can be compared
# bit for bit (the resume test does).

import datetime
import json
import math
import shlex
import sys
from pathlib import Path

from minibert.io.atomic import atomic_write
from minibert.surrogates import record_json
from minibert.viz import line_chart_svg, save_svg

LOG_FILE = "log.jsonl"
SESSION_KINDS = ("start", "resume", "end")  # the records that say when a session began and ended


class TrainingLog:
    """Append records to `path` (created if needed)."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, kind, **fields):
        if kind in SESSION_KINDS:  # when, and how: what a run's report shows beside its curves
            fields.setdefault("time", utc_now())
            if kind != "end":
                fields.setdefault("command", command_line())
        record = {"kind": kind, **{key: _plain(value) for key, value in fields.items()}}
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(record_json(record) + "\n")
        return record

    def drop_after(self, step):
        """Forget the records of steps after `step`: a killed run trained past its last checkpoint, and the
        resumed run will train those steps again."""
        kept = [record for record in read_log(self.path) if record.get("step", 0) <= step]
        with atomic_write(self.path) as file:
            file.write("".join(record_json(record) + "\n" for record in kept).encode())


def read_log(path):
    """The records of a log file, in order; a half-written last line (a killed run) is left out."""
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():  # a line not ours is skipped
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def draw_curves(records, folder):
    """Write `loss.svg` and `accuracy.svg` into `folder` from the log records; returns the paths written.

    The x axis is the step. Training figures are the averages of each logging interval, held-out ones are
    the evaluations.
    """
    train = [record for record in records if record["kind"] == "train"]
    evals = [record for record in records if record["kind"] == "eval"]
    charts = {
        "loss.svg": ("loss", {"train loss": (train, "loss"), "train MLM loss": (train, "mlm_loss"),
                              "held-out MLM loss": (evals, "mlm_loss"),
                              "held-out NSP loss": (evals, "nsp_loss")}),
        "accuracy.svg": ("accuracy", {"train MLM": (train, "mlm_accuracy"),
                                      "held-out MLM": (evals, "mlm_accuracy"),
                                      "train NSP": (train, "nsp_accuracy"),
                                      "held-out NSP": (evals, "nsp_accuracy")}),
    }
    written = []
    for file_name, (y_label, wanted) in charts.items():
        series = {}
        for name, (rows, key) in wanted.items():
            points = [(row["step"], row[key]) for row in rows if _is_finite(row.get(key))]
            if points:
                series[name] = ([x for x, _ in points], [y for _, y in points])
        if series:
            svg = line_chart_svg(series, title=f"pretraining {y_label}", x_label="step", y_label=y_label)
            written.append(save_svg(Path(folder) / file_name, svg))
    return written


def utc_now():
    """The wall-clock time as ISO 8601 in UTC, to the second: "2026-12-04T10:00:00Z"."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def command_line():
    """The command this process runs, as one could type it again: `python -m minibert pretrain ...` for the
    command line, `python SCRIPT ...` for a script that calls the library."""
    arguments = sys.argv[1:]
    program = "python -m minibert" if Path(sys.argv[0]).name == "__main__.py" else f"python {sys.argv[0]}"
    return " ".join([program, *map(shlex.quote, arguments)])


def _is_finite(value):
    return isinstance(value, (int, float)) and math.isfinite(value)


def _plain(value):
    """NumPy scalars as Python numbers; NaN and infinity as None (JSON has no NaN)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
