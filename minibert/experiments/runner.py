"""Running an experiment: every arm with every seed, each run's result saved the moment it ends.

An `Experiment` is a controlled comparison: its arms differ in one thing (the masking mix, the model's
size) and share everything else: the data, the budget in steps, the seeds. Run k of arm a uses seed k, the
same k in every arm, so two arms differ only in what the experiment varies (the same initial weights where
the shapes agree, the same batches, the same fine-tuning order), and a seed that happens to be lucky is
lucky for every arm alike.

Each run writes `runs/<arm>-seed<k>.json` atomically (a crash never leaves half a record) with the settings
that decided it. Started again, the runner skips the runs whose record is whole (every metric the arm
measures, each a finite number, and the record's experiment, mode, arm, seed and settings those of the run),
so Ctrl-C loses at most the run in progress. A damaged record is named in one line, kept aside as
`<arm>-seed<k>.json.damaged`, and its run made again. A folder holding another experiment's runs, or this
one's with other settings (another mode, or settings changed since), is refused before anything is run or
moved, rather than mixed.

A run is claimed before it starts (a lock on `claims/<arm>-seed<k>`, minibert/io/folder_lock.py), so that
several processes can share one folder's runs (`experiment --join`): each makes the next run no live
process has claimed, and a run whose process died is claimed again.
"""

import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numba

from minibert.errors import ConfigError
from minibert.experiments.code_version import code_version
from minibert.io.atomic import atomic_write
from minibert.io.folder_lock import LOCK_FILE, FolderInUse, FolderLock, pid_is_running, read_pid
from minibert.io.overwrite import free_name
from minibert.surrogates import record_json
from minibert.train.interrupt import stop_if_requested
from minibert.train.progress import ProgressLine, format_duration

MODES = ("quick", "full", "mini")
RUNS_FOLDER = "runs"
CLAIMS_FOLDER = "claims"  # a lock per run being made: which process makes it
RESULTS_FILE = "results.json"  # written by results.py; here because the folder check reads it too


@dataclass(frozen=True)
class Experiment:
    """One comparison. `run(arm, seed, settings, shared)` trains and measures one arm with one seed and
    returns {metric: value}; `shared` is a dict kept across the arms of one seed (a model pretrained once
    per seed and fine-tuned in several arms), starting as {"out_dir": the experiment's folder} (where the
    ladder keeps its task files)."""

    name: str
    metrics: object  # mode -> {metric: column title}; quick mode measures what moves within its minute
    arms: object  # mode -> {arm: label}; arm names are safe as file names ("80-10-10")
    settings: object  # mode -> {setting: value}: everything that decides the numbers, JSON-able
    run: object
    note: str = ""  # what to look for, printed under the table
    unmeasured: object = None  # mode -> {arm: metrics its runs cannot measure} (nsp's `none` has no NSP head)
    figure: object = None  # (path, results record) -> path: its own picture (None: results.py's dot plot)
    # True: every seed of an arm before the next arm, so that a stopped run holds whole arms (the ladder's, in
    # the order its findings need them); False: every arm of a seed, then the next seed.
    seeds_inner: bool = False
    # (settings, out_dir) -> None, raising ConfigError: what must exist before any run (the ladder's models)
    check: object = None
    provenance: object = None  # out_dir -> dict for results.json: where the runs' inputs come from
    # arm -> its kind, the runs of one kind taking about as long (the ladder's: a probe takes seconds, a
    # fine-tuning ten minutes): each left run is estimated from the runs of its kind. None: all alike
    run_kind: object = None
    # (arm, seed, settings) -> the PretrainingConfig that run pretrains with, for an experiment whose arms differ
    # in pretraining only (masking, mask-rate, nsp): lets a lesson look at the batches an arm trains on
    config: object = None

    def measured(self, mode, arm):
        """The metrics every finished run of `arm` holds: the mode's, less those the arm cannot measure."""
        cannot = self.unmeasured(mode).get(arm, ()) if self.unmeasured else ()
        return [metric for metric in self.metrics(mode) if metric not in cannot]


def run_path(out_dir, arm, seed):
    return Path(out_dir) / RUNS_FOLDER / f"{arm}-seed{seed}.json"


def read_json(path):
    """What the JSON file at `path` holds; raises OSError or ValueError if it cannot be read or parsed."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def check_folder_is_its_own(out_dir, name, mode, settings):
    """Refuse `out_dir` if its results.json or a run record there belongs to another experiment, or to this one
    run with other settings: mixed in, its runs would sit in a table beside runs made differently, and the
    next results.json would replace the other experiment's. Run before anything in the folder changes."""
    out_dir = Path(out_dir)
    for path in [out_dir / RESULTS_FILE, *sorted((out_dir / RUNS_FOLDER).glob("*.json"))]:
        try:
            record = read_json(path)
        except (OSError, ValueError):
            continue  # not there, or damaged: a damaged run record is dealt with below, results.json rewritten
        if not isinstance(record, dict):
            continue
        where = path.relative_to(out_dir)
        other, theirs = record.get("experiment"), record.get("settings")
        if isinstance(other, str) and other != name:
            raise ConfigError(f"{out_dir} holds the runs of experiment {other} ({where}), not of {name}; give "
                              f"{name} another --out")
        if isinstance(theirs, dict) and theirs != settings:
            their_mode = record.get("mode")
            made = (f"in {their_mode} mode, not {mode}" if isinstance(their_mode, str) and their_mode != mode
                    else f"with other settings ({setting_changes(theirs, settings)})")
            raise ConfigError(f"{out_dir} holds runs of {name} made {made} ({where}); give another --out, or "
                              f"delete {out_dir} to start over")


def setting_changes(theirs, ours):
    """"steps 3, not 4": each setting whose value in a saved record (`theirs`) is not the value now."""
    return "; ".join(f"{key} {theirs.get(key)!r}, not {ours.get(key)!r}"
                     for key in sorted(theirs.keys() | ours.keys()) if theirs.get(key) != ours.get(key))


def is_measure(value):
    """Whether `value` can be a metric's value: a finite number (True is an int to Python, but no measure)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or isinstance(value, float) and math.isfinite(value)


def record_problem(record, fields, metrics):
    """What keeps `record` from being the whole record of the run `fields` describes ({"experiment", "mode",
    "arm", "seed", "settings"}: their values) measuring `metrics`, in a few words; None if it is whole."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for field, value in fields.items():
        found = record.get(field)
        if type(found) is not type(value) or found != value:  # the type too: seed 1.0 or True is not seed 1
            return f"no {field}" if found is None else f"{field} {found!r}, not {value!r}"
    if not is_measure(record.get("seconds")):  # results.json reports each run's time
        return f"seconds {record.get('seconds')!r}, not a number"
    if not isinstance(record.get("metrics"), dict):
        return "no metrics"
    for metric in metrics:
        if metric not in record["metrics"]:
            return f"no {metric} metric"
        if not is_measure(record["metrics"][metric]):
            return f"{metric} is {record['metrics'][metric]!r}, not a number"
    return None


def read_record(path, fields, metrics, say):
    """The whole record of a finished run at `path` (see record_problem), or None when there is none or it is
    damaged. A damaged record is not deleted (it may hold a number worth keeping, or show what broke it): it
    is renamed `NAME.damaged` before its run is made again, and `say` names it in one line."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        record = read_json(path)
        problem = record_problem(record, fields, metrics)
    except (OSError, ValueError):
        problem = "cut short, or not JSON"
    if problem is None:
        return record
    kept = free_name(path.with_name(path.name + ".damaged"))
    path.rename(kept)
    say(f"{path} is damaged ({problem}): kept as {kept.name}; its run is made again when the experiment runs")
    return None


def write_record(path, record):
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        file.write((record_json(record, indent=1) + "\n").encode("utf-8"))


def claim_run(out_dir, arm, seed):
    """The held lock that makes this process the one making run (arm, seed), or None when another live
    process holds it (`release()` it when the run is saved, or stopped)."""
    try:
        return FolderLock(Path(out_dir) / CLAIMS_FOLDER / f"{arm}-seed{seed}", "process making this run").acquire()
    except FolderInUse:
        return None


def processes_at_work(out_dir):
    """How many live processes hold a claim in `out_dir` (this one counted whether it holds one or not): the
    runs left are shared among them."""
    owners = {read_pid(lock) for lock in (Path(out_dir) / CLAIMS_FOLDER).glob(f"*/{LOCK_FILE}")}
    return len({pid for pid in owners if pid_is_running(pid)} | {os.getpid()})


def saved_record(experiment, mode, settings, out_dir, arm, seed, say):
    """The whole saved record of run (arm, seed) made with `settings`, or None (read_record)."""
    return read_record(run_path(out_dir, arm, seed), {
        "experiment": experiment.name, "mode": mode, "arm": arm, "seed": seed, "settings": settings},
        experiment.measured(mode, arm), say)


def saved_records(experiment, mode, seeds, out_dir, say):
    """{(arm, seed): its saved record, or None} for every run of `experiment` in `mode`, in the order they
    run (arm by arm within seed by seed, or seed by seed within arm by arm with `seeds_inner`). Refuses a
    folder of another experiment or settings; a damaged record is said with `say` and set aside."""
    if mode not in MODES:
        raise ConfigError(f"mode {mode!r}; choose one of {', '.join(MODES)}")
    settings, arms = experiment.settings(mode), experiment.arms(mode)
    for arm in arms:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", arm):
            raise ConfigError(f"arm {arm!r} of {experiment.name} cannot name a file; use letters, digits, . _ -")
    check_folder_is_its_own(out_dir, experiment.name, mode, settings)
    plan = ([(arm, seed) for arm in arms for seed in range(seeds)] if experiment.seeds_inner
            else [(arm, seed) for seed in range(seeds) for arm in arms])
    return {(arm, seed): saved_record(experiment, mode, settings, out_dir, arm, seed, say) for arm, seed in plan}


def time_left(records, kind_of):
    """(seconds, runs): what the runs without a record ({(arm, seed): record or None}) will take, each the mean
    time of the recorded runs of its kind (`kind_of(arm)`), and how many are of a kind none of which has run."""
    seconds_of = {}
    for (arm, _), record in records.items():
        if record is not None:
            seconds_of.setdefault(kind_of(arm), []).append(record["seconds"])
    left = [kind_of(arm) for (arm, _), record in records.items() if record is None]
    return (sum(sum(seconds_of[kind]) / len(seconds_of[kind]) for kind in left if kind in seconds_of),
            sum(kind not in seconds_of for kind in left))


def eta_text(seconds, untimed):
    """`1:02:03`, with `+ 12 runs not timed yet` when some are of a kind not run yet; `?` when none is timed."""
    if untimed and not seconds:
        return "?"
    return format_duration(seconds) + (f" + {untimed} run{'s' * (untimed != 1)} not timed yet" if untimed else "")


def run_experiment(experiment, mode, seeds, out_dir, stream=None, live=None, command=None):
    """Run every arm of `experiment` with seeds 0..seeds-1 in `out_dir`, skipping the runs already saved
    there and those another process is making; returns the records of the runs saved by the end, in the
    order they run (saved_records): all of them, less those another process has not finished. Each new
    run's record names the `command` that made it, so results.json can say truthfully whether one command
    made them all, and the threads it ran on (a product cut among threads adds its parts in another order:
    the last digits may differ)."""
    progress = ProgressLine(sys.stderr if stream is None else stream, live=live)
    records = saved_records(experiment, mode, seeds, out_dir, progress.message)
    settings, arms, metric_titles = experiment.settings(mode), experiment.arms(mode), experiment.metrics(mode)
    if experiment.check is not None:
        experiment.check(settings, Path(out_dir))
    plan = list(records)
    done = sum(record is not None for record in records.values())
    if done:
        progress.message(f"{done} of {len(plan)} runs already in {Path(out_dir) / RUNS_FOLDER}: skipped")
    shared_by_seed = {}

    def make_run(arm, seed, index):
        if seed not in shared_by_seed:
            if not experiment.seeds_inner:
                shared_by_seed.clear()  # seed by seed: the last seed's models are done with
            shared_by_seed[seed] = {"out_dir": Path(out_dir)}
        seconds, untimed = time_left(records, experiment.run_kind or (lambda arm: None))
        eta = eta_text(seconds / processes_at_work(out_dir), untimed)
        progress.update(f"run {index}/{len(plan)}: {arms[arm]}, seed {seed}  ETA {eta}", force=True)
        started = time.perf_counter()
        metrics = experiment.run(arm, seed, settings, shared_by_seed[seed])
        seconds = time.perf_counter() - started
        record = {"experiment": experiment.name, "mode": mode, "arm": arm, "seed": seed, "metrics": metrics,
                  "seconds": seconds, "settings": settings, "command": command, "code": code_version(),
                  "threads": numba.config.NUMBA_NUM_THREADS}
        write_record(run_path(out_dir, arm, seed), record)
        records[(arm, seed)] = record
        shown = ", ".join(f"{metric_titles[name]} {value:.1f}" for name, value in metrics.items()
                          if isinstance(value, (int, float)) and name in metric_titles)
        progress.message(f"run {index}/{len(plan)} {arms[arm]}, seed {seed}: {shown} ({seconds:.0f} s)")

    try:
        for index, (arm, seed) in enumerate(plan, start=1):
            if records[(arm, seed)] is not None:
                continue
            claim = claim_run(out_dir, arm, seed)
            if claim is None:
                continue  # another process is making it
            try:
                # saved since this process looked, by a process that has let its claim go
                records[(arm, seed)] = saved_record(experiment, mode, settings, out_dir, arm, seed, progress.message)
                if records[(arm, seed)] is None:
                    make_run(arm, seed, index)
            finally:
                claim.release()
            stop_if_requested()  # Ctrl-C pressed while this run measured: it is saved, stop before the next
    except KeyboardInterrupt:
        progress.close()
        saved = sum(record is not None for record in records.values())
        progress.message(f"stopped: {saved} of {len(plan)} runs are saved in {Path(out_dir) / RUNS_FOLDER}; "
                         "run the same command again to go on from there")
        raise
    progress.close()
    for arm, seed in plan:  # the runs other processes made meanwhile
        if records[(arm, seed)] is None:
            records[(arm, seed)] = saved_record(experiment, mode, settings, out_dir, arm, seed, progress.message)
    return [records[key] for key in plan if records[key] is not None]

