"""What the ablation lessons (19 masking, 20 mask-rate, 21 nsp) share: look at the batches an arm trains on,
run one experiment of the lab here, and read back its stored full and `mini` runs (lesson 13 reads back
`direction`'s).

`run_here` runs every arm with 3 seeds in quick mode (70-80 steps of the `tiny` model per run), or in full
mode with `--full` (800 steps per run; each stored full record says how long its runs took, and on which
CPU), as `python -m minibert experiment NAME` does, and prints the table. Every run is a step count, never a
time budget, so the table does not depend on the machine's speed. Its runs are saved under the lesson's
output folder as they end, so a second run of the lesson reads them instead of training again. `stored_run`
prints a run that docs/experiments.md reports: the full mode's from docs/figures/experiment-NAME.json, the
`mini` mode's (the same runs on the 4-layer model) from experiment-NAME-mini.json.
"""

import json
import os
from itertools import islice

import course

from minibert.experiments import load_experiment
from minibert.experiments.pretraining import open_data
from minibert.experiments.runner import run_experiment
from minibert.experiments.setup import data_dir
from minibert.experiments.summary import summarize_runs
from minibert.experiments.table import format_table

SEEDS = 3
STORED = course.ROOT / "docs" / "figures"


def run_here(name, lesson):
    """Run experiment `name` (quick, or full with --full) with 3 seeds per arm; print its table and return its
    summary, {arm: {metric: Summary}} (minibert/experiments/summary.py)."""
    os.chdir(course.ROOT)  # the experiments read data/synthetic, as the command does from the repository root
    experiment, mode = load_experiment(name), "full" if course.FULL else "quick"
    arms, metrics = experiment.arms(mode), experiment.metrics(mode)
    course.title(f"{name}, {mode} mode, run here: {len(arms)} arms x {SEEDS} seeds")
    records = run_experiment(experiment, mode, SEEDS, course.OUTPUT / f"{lesson}_{name}-{mode}")
    summary = summarize_runs(records, arms, metrics)
    print(format_table(summary, metrics, arms))
    return summary


def training_batches(name, arm, count):
    """The first `count` batches that the first run of `arm` in experiment `name` trains on (quick mode, or full
    with --full), from the same data, masked and paired as that run's are: the arm's difference is in them."""
    os.chdir(course.ROOT)
    experiment = load_experiment(name)
    settings = experiment.settings("full" if course.FULL else "quick")
    _, train, _ = open_data(experiment.config(arm, 0, settings), data_dir(settings))
    return list(islice(train.epoch(0), count))


def stored_record(name, mode):
    """The stored results record (minibert/experiments/results.py) of `name` in `mode` ("full", or "mini":
    the full mode on the 4-layer `mini`) that docs/experiments.md reports, or None (said) when there is none."""
    stored = STORED / (f"experiment-{name}.json" if mode == "full" else f"experiment-{name}-{mode}.json")
    if not stored.is_file():
        print(f"(no stored {mode} run at {stored}: run `python -m minibert experiment {name} --{mode}`)")
        return None
    return json.loads(stored.read_text(encoding="utf-8"))


def stored_run(name, mode, look_for):
    """Print the stored run of `name` in `mode` (see stored_record), when and where it ran, and what to look
    for; return its summary, as `run_here`, or None when no stored run is there."""
    course.title(f"{name}, {mode} mode, as docs/experiments.md reports it")
    record = stored_record(name, mode)
    if record is None:
        return None
    summary = summarize_runs(record["runs"], record["arms"], record["metrics"])
    print(format_table(summary, record["metrics"], record["arms"]))
    print(f"{record['command']}; {record['date']}; {record['cpu']}")
    print(f"What to look for: {look_for}")
    return summary
