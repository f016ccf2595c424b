"""What an experiment leaves behind: `results.json` (everything needed to check or redraw it) and the
picture, `experiment-<name>.svg`, one panel per metric with every seed's value and each arm's mean.

results.json holds the command, the date (UTC), the CPU (model, vector ISA, cores), the settings, every
run's values, seconds and threads (where its record names them), and the summary (mean, sample standard
deviation, min, max, n per arm and metric).
`made_by` counts the runs each command made: one command, resumed as often as needed, makes them all, and a
run whose record names no command (made before records named theirs, or by other means) is counted as such.
`made_with` counts the runs each version of the code made (code_version.py): a run resumed days later under
changed code says so.
An experiment with a `provenance` adds where its inputs come from (the ladder's checkpoints and task splits).
"""

import json
import time
from collections import Counter
from pathlib import Path

from minibert.cpu import describe_cpu
from minibert.experiments.runner import write_record
from minibert.experiments.summary import summarize_runs
from minibert.viz.svg import dot_plot_svg, save_svg

NO_COMMAND = "no command recorded"
NO_CODE = "no code version recorded"  # runs made before records named their code


def results_record(experiment, mode, records, command, out_dir=None):
    """The JSON-able record of a finished (or partly finished) experiment, in `out_dir` (for its provenance)."""
    arms, metrics = experiment.arms(mode), experiment.metrics(mode)
    summaries = summarize_runs(records, arms, metrics)
    return {
        "experiment": experiment.name, "mode": mode, "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": describe_cpu(),
        "settings": experiment.settings(mode), "arms": arms, "metrics": metrics,
        "seeds": sorted({record["seed"] for record in records}),
        "made_by": dict(Counter(record.get("command") or NO_COMMAND for record in records)),
        "made_with": [{"code": json.loads(code), "runs": count} for code, count in Counter(
            json.dumps(record.get("code") or NO_CODE, sort_keys=True) for record in records).items()],
        "runs": [{key: record[key] for key in ("arm", "seed", "metrics", "seconds", "threads") if key in record}
                 for record in records],
        "summary": {arm: {metric: summary.to_dict() for metric, summary in by_metric.items()}
                    for arm, by_metric in summaries.items()},
        **({"provenance": experiment.provenance(out_dir)}
           if experiment.provenance is not None and out_dir is not None else {}),
    }


def write_results(path, record):
    """`record` as JSON in `path` (an experiment's folder's RESULTS_FILE), atomically, as each run's record."""
    write_record(Path(path), record)
    return path


def draw_results(path, record):
    """The dot plot of `record` (results_record) written to `path`; returns the path."""
    panels = {title: {label: [run["metrics"][metric] for run in record["runs"]
                              if run["arm"] == arm and run["metrics"].get(metric) is not None]
                      for arm, label in record["arms"].items()}
              for metric, title in record["metrics"].items()}
    title = f"{record['experiment']} ({record['mode']}): each dot a seed, each bar the mean"
    return save_svg(path, dot_plot_svg(panels, title=title))
