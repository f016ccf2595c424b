"""The tuning budget's edge: would a learning rate beyond the ladder's budget change what it found?

The ladder gives every rung the same three learning rates (ladder_tuning.TUNING: 1e-4, 3e-4, 1e-3) and
chooses among them on validation. When a rung keeps choosing the largest (or the smallest), its search may
have stopped short of its best rate, and its score, with the gains read from it, may be too low; a rung that
chooses inside the budget is not. A reviewer asks whether a rate beyond the budget would have been chosen, and
whether the findings move. This answers it for one task and size of a ladder folder's finished runs: each
run (rung and seed) is fine-tuned once more at --rate, with the run's own recipe, examples and seed, as the
ladder would have; the rate is chosen again on validation among the budget's rates and this one; and the
model chosen is scored on test. When the new rate is not chosen, the chosen model is the run's own, and so is
its test score (the run's record holds which test examples it got right); when it is, its model is scored.

    python bench/ladder_budget_edge.py --ladder runs/experiments/ladder-full --task package-topics \\
        --out docs/figures/experiment-ladder-budget-edge-package-topics.json

It writes a record in results.json's form (the runs with the budget extended, the ladder's provenance), which
ladder_table.py reads as it reads the ladder's: the table, the gains over random weights and their intervals.
Each new fine-tuning is saved as it ends, in the ladder folder beside the budget's (`trials-lr<rate>/`, the
record going where --out says: docs/figures holds no logs), with its test answers once it is chosen and
scored, so a stopped run goes on where it stopped and a run read again fine-tunes nothing again.
"""

import argparse
import sys
import time
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.experiments.bootstrap import pack_correct, unpack_correct  # noqa: E402
from minibert.experiments.code_version import code_version  # noqa: E402
from minibert.experiments.ladder import HEADLINE_SIZE, fine_tuning_start, splits_of  # noqa: E402
from minibert.experiments.ladder_arms import RUNGS, arm_name, parse_arm  # noqa: E402
from minibert.experiments.ladder_table import markdown_tables  # noqa: E402
from minibert.experiments.ladder_tasks import LADDER_TASKS, read_rows, training_file  # noqa: E402
from minibert.experiments.ladder_tuning import (  # noqa: E402
    TRIALS_FOLDER,
    chosen_rate,
    correct_on_test,
    fine_tune_once,
    read_trial,
    tuned_outcome,
    write_trial,
)
from minibert.experiments.runner import RUNS_FOLDER, read_json, write_record  # noqa: E402

WAY = "finetune"


def ladder_runs(ladder, task, size, rungs):
    """The ladder's finished run records of `task`'s fine-tunings at `size`, rung by rung, seed by seed."""
    found = []
    for rung in rungs:
        paths = sorted((ladder / RUNS_FOLDER).glob(f"{arm_name(rung, task, WAY, size)}-seed*.json"))
        found += [read_json(path) for path in paths]
    return found


def ladder_results(ladder):
    """The ladder folder's results.json, or, while it runs, the results-so-far.json of `--so-far`: the record
    takes the provenance (checkpoints, task splits, test documents) from it."""
    for name in ("results.json", "results-so-far.json"):
        if (ladder / name).is_file():
            return read_json(ladder / name)
    raise SystemExit(f"{ladder}: no results.json, nor results-so-far.json (`experiment ladder --full --so-far --out "
                     f"{ladder}` writes it from the runs saved so far)")


def above_budget(run, ladder, rate, trials_dir):
    """`run` (a ladder run record) with `rate` added to its budget: the fine-tuning at `rate` made (or read back
    from `trials_dir`), the rate chosen again on validation, and the chosen model's test answers."""
    settings, arm, seed = run["settings"], run["arm"], run["seed"]
    rung, task, way, size = parse_arm(arm)
    files = splits_of(settings, ladder, task)
    train_path = training_file(files, size, seed)
    start = fine_tuning_start(settings, rung, ladder, way, pairs=len(read_rows(train_path)[0]) == 3)
    budget_dir = ladder / TRIALS_FOLDER / f"{arm}-seed{seed}"
    trials = {known: read_trial(budget_dir, known, settings) for known in settings["tuning"]["learning_rates"]}
    if any(trial is None for trial in trials.values()):
        raise SystemExit(f"{budget_dir}: the run's fine-tunings are not all there, or were made with other settings")
    new_dir, model = trials_dir / f"{arm}-seed{seed}", None
    trials[rate] = read_trial(new_dir, rate, settings)
    if trials[rate] is None:
        task_of, model, trials[rate] = fine_tune_once(start, files, train_path, seed, rate, new_dir, settings)
        write_trial(new_dir, rate, trials[rate])
    chosen = chosen_rate(trials)
    if chosen == rate and "test_correct" in trials[rate]:  # scored before: its answers were kept with it
        correct = unpack_correct(trials[rate]["test_correct"], trials[rate]["test_examples"]).tolist()
    elif chosen == rate:
        if model is None:  # read back from before answers were kept: made again, the same seed, the same weights
            task_of, model, _ = fine_tune_once(start, files, train_path, seed, rate, new_dir, settings)
        correct = correct_on_test(task_of, model, files)
        trials[rate] = {**trials[rate], "test_correct": pack_correct(correct), "test_examples": len(correct)}
        write_trial(new_dir, rate, trials[rate])  # so that reading it again needs no fine-tuning again
    else:  # the budget's choice stands: its model, and its test answers, are the run's own
        assert chosen == run["metrics"]["chosen"]["learning_rate"], (arm, seed, chosen)
        correct = unpack_correct(run["metrics"]["test_correct"], run["metrics"]["test_examples"]).tolist()
    metrics = tuned_outcome(trials, chosen, correct, read_rows(files.validation))
    counted = {key: run["metrics"][key] for key in ("train_examples", "per_class")}
    # the added rate's fine-tuning whole, its evaluations too: how it went, not only where it peaked
    added = {key: value for key, value in trials[rate].items()
             if key not in ("settings", "test_correct", "test_examples")}  # its test answers: in the metrics
    return {**run, "metrics": {**metrics, **counted}, "added_trial": added}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", type=Path, required=True, help="a ladder folder (experiment ladder --full --out)")
    parser.add_argument("--task", default="package-topics", choices=list(LADDER_TASKS))
    parser.add_argument("--size", default=HEADLINE_SIZE, help="examples a class (30, 100, 300, all)")
    parser.add_argument("--rate", type=float, default=3e-3,
                        help="the learning rate added to the budget: above it (3e-3) or below it (3e-5)")
    parser.add_argument("--rungs", nargs="+", default=["random", "15min", "60min", "60min_large"],
                        choices=[rung for rung in RUNGS if not rung.startswith("15min_")])
    parser.add_argument("--out", type=Path, required=True, help="the record to write (JSON)")
    arguments = parser.parse_args()
    runs = ladder_runs(arguments.ladder, arguments.task, arguments.size, arguments.rungs)
    if not any(run["arm"].startswith("random-") for run in runs):
        raise SystemExit(f"{arguments.ladder}: no finished run of random weights on {arguments.task} at "
                         f"{arguments.size} a class: the gains are read against them")
    results = ladder_results(arguments.ladder)
    print(describe_cpu())
    code = code_version()  # the code the fine-tunings are made with, read before they start
    trials_dir = arguments.ladder / f"{TRIALS_FOLDER}-lr{arguments.rate:g}"
    extended = []
    for run in runs:
        started = time.perf_counter()
        extended.append(above_budget(run, arguments.ladder, arguments.rate, trials_dir))
        chosen, before = extended[-1]["metrics"], run["metrics"]
        print(f"{run['arm']}, seed {run['seed']}: chosen {before['chosen']['learning_rate']:g} -> "
              f"{chosen['chosen']['learning_rate']:g}; test {before['accuracy']:.1f} -> {chosen['accuracy']:.1f} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    settings = dict(runs[0]["settings"])
    rates = sorted(settings["tuning"]["learning_rates"] + [arguments.rate])
    settings.update(tuning={**settings["tuning"], "learning_rates": rates}, tasks=[arguments.task],
                    sizes=[arguments.size], rungs=arguments.rungs)
    write_edge_record(arguments.out, arguments.task, results, {"added_rate": arguments.rate}, settings, code,
                      [{key: run[key] for key in ("arm", "seed", "metrics", "added_trial")} for run in extended])


def write_edge_record(out, task, results, added, settings, code, runs):
    """Write a record of one task's ladder runs with their search extended (`added` says by what), in
    results.json's form with the ladder's provenance, so that ladder_table.py reads it; print its table."""
    record = {"experiment": "ladder", "mode": "full", "command": "python " + " ".join(sys.argv),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpu": describe_cpu(),
              "ladder": {"command": results["command"], "date": results["date"], "runs": len(runs)},
              **added, "settings": settings, "code": code, "threads": numba.config.NUMBA_NUM_THREADS, "runs": runs,
              "provenance": {**results["provenance"], "tasks": {task: results["provenance"]["tasks"][task]}}}
    write_record(out, record)
    print(markdown_tables(record)[task])
    print(f"written: {out}")


if __name__ == "__main__":
    main()
