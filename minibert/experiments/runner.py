"""Running an experiment: every arm with every seed, each run's result saved the moment it ends.

An `Experiment` is a controlled comparison: its arms differ in one thing (the masking mix, the model's
size) and share everything else: the data, the budget in steps, the seeds. Run k of arm a uses seed k, the
same k in every arm, so two arms differ only in what the experiment varies (the same initial weights where
the shapes agree, the same batches, the same fine-tuning order), and a seed that happens to be lucky is
lucky for every arm alike.

Each run writes `runs/<arm>-seed<k>.json` atomically (a crash never leaves half a record) with the settings
that decided it. Started again, the runner skips the runs whose record is there and whose settings match,
and runs a damaged record's run again; so Ctrl-C loses at most the run in progress. A folder holding runs
of other settings is refused rather than mixed.
"""

import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from minibert.errors import ConfigError
from minibert.io.atomic import atomic_write
from minibert.train.interrupt import stop_if_requested
from minibert.train.progress import ProgressLine, format_duration

MODES = ("quick", "full", "mini")
RUNS_FOLDER = "runs"


@dataclass(frozen=True)
class Experiment:
    """One comparison. `run(arm, seed, settings, shared)` trains and measures one arm with one seed and
    returns {metric: value}; `shared` is a dict kept across the arms of one seed (a model pretrained once
    per seed and fine-tuned in several arms), emptied when the seed changes."""

    name: str
    metrics: object  # mode -> {metric: column title}; quick mode measures what moves within its minute
    arms: object  # mode -> {arm: label}; arm names are safe as file names ("80-10-10")
    settings: object  # mode -> {setting: value}: everything that decides the numbers, JSON-able
    run: object
    note: str = ""  # what to look for, printed under the table


def run_path(out_dir, arm, seed):
    return Path(out_dir) / RUNS_FOLDER / f"{arm}-seed{seed}.json"


def read_record(path, settings):
    """The finished run's record at `path`, or None when there is none or it is damaged (then the run is
    made again). A record of other settings raises: the folder belongs to another experiment."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not there, unreadable, or cut short
        return None
    if not isinstance(record, dict) or not isinstance(record.get("metrics"), dict):
        return None
    if record.get("settings") != settings:
        raise ConfigError(f"{path} holds a run made with other settings ({record.get('settings')}, not "
                          f"{settings}); give another --out, or delete {Path(path).parent} to start over")
    return record


def write_record(path, record):
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        file.write((json.dumps(record, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def run_experiment(experiment, mode, seeds, out_dir, stream=None, live=None):
    """Run every arm of `experiment` with seeds 0..seeds-1 in `out_dir`, skipping the runs already saved
    there; returns the records of all runs, in the order arm by arm within seed by seed."""
    if mode not in MODES:
        raise ConfigError(f"mode {mode!r}; choose one of {', '.join(MODES)}")
    settings, arms, metric_titles = experiment.settings(mode), experiment.arms(mode), experiment.metrics(mode)
    for arm in arms:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", arm):
            raise ConfigError(f"arm {arm!r} of {experiment.name} cannot name a file; use letters, digits, . _ -")
    plan = [(arm, seed) for seed in range(seeds) for arm in arms]
    records = {(arm, seed): read_record(run_path(out_dir, arm, seed), settings) for arm, seed in plan}
    done = sum(record is not None for record in records.values())
    progress = ProgressLine(sys.stderr if stream is None else stream, live=live)
    if done:
        progress.message(f"{done} of {len(plan)} runs already in {Path(out_dir) / RUNS_FOLDER}: skipped")
    durations, shared, shared_seed = [], {}, None
    try:
        for index, (arm, seed) in enumerate(plan, start=1):
            if records[(arm, seed)] is not None:
                continue
            if seed != shared_seed:
                shared, shared_seed = {}, seed
            left = sum(record is None for record in records.values())
            eta = format_duration(sum(durations) / len(durations) * left) if durations else "?"
            progress.update(f"run {index}/{len(plan)}: {arms[arm]}, seed {seed}  ETA {eta}", force=True)
            started = time.perf_counter()
            metrics = experiment.run(arm, seed, settings, shared)
            seconds = time.perf_counter() - started
            durations.append(seconds)
            record = {"experiment": experiment.name, "mode": mode, "arm": arm, "seed": seed, "metrics": metrics,
                      "seconds": seconds, "settings": settings}
            write_record(run_path(out_dir, arm, seed), record)
            records[(arm, seed)] = record
            stop_if_requested()  # Ctrl-C pressed while this run measured: it is saved, stop before the next
            shown = ", ".join(f"{metric_titles[name]} {value:.1f}" for name, value in metrics.items()
                              if isinstance(value, (int, float)) and name in metric_titles)
            progress.message(f"run {index}/{len(plan)} {arms[arm]}, seed {seed}: {shown} ({seconds:.0f} s)")
    except KeyboardInterrupt:
        progress.close()
        saved = sum(record is not None for record in records.values())
        progress.message(f"stopped: {saved} of {len(plan)} runs are saved in {Path(out_dir) / RUNS_FOLDER}; "
                         "run the same command again to go on from there")
        raise
    progress.close()
    return [records[key] for key in plan]

