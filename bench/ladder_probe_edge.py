"""The probe's penalty at its grid's edge: would a larger ridge penalty change what the ladder found?

The ladder's linear probe chooses its ridge penalty on validation among linear_probe.RIDGE_GRID (0.1 to
10,000). When a probe chooses the largest, its search may have stopped short, as a fine-tuning's may at the
learning rates' edge (bench/ladder_budget_edge.py). This answers it for one task of a ladder folder's
finished probes: each probe (rung, size and seed) is fitted again on the same frozen features with the grid
extended by --ridges, the penalty is chosen again on validation, and, where the choice moves, the new
classifier is scored on test. It is the ladder's own probe (ladder_tuning.probe) given a wider grid, and it
first runs that probe with the grid the ladder had: its choice, validation accuracy and test answers must
be the run record's, to the last digit, or the features are not the ones the ladder used and it stops.

    python bench/ladder_probe_edge.py --ladder runs/ladder-rerun --task doc-pairs \\
        --out runs/probe-edge/doc-pairs.json

It writes a record in results.json's form (the probes with the grid extended, the ladder's provenance),
which ladder_table.py reads as it reads the ladder's. A probe takes seconds and a rung's encoding of a task's
sentences a minute or so, so a task's 51 probes take minutes (docs/experiments.md, the ladder, says how many).
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)
from ladder_budget_edge import ladder_results, write_edge_record  # noqa: E402  (bench/ladder_budget_edge.py)

from minibert.experiments.code_version import code_version  # noqa: E402
from minibert.experiments.ladder import CachedVectors, sentence_encoder, sentence_features, splits_of  # noqa: E402
from minibert.experiments.ladder_arms import parse_arm  # noqa: E402
from minibert.experiments.ladder_tasks import LADDER_TASKS, read_rows, training_file  # noqa: E402
from minibert.experiments.ladder_tuning import probe  # noqa: E402
from minibert.experiments.runner import RUNS_FOLDER, read_json  # noqa: E402
from minibert.finetune.linear_probe import RIDGE_GRID  # noqa: E402

WAY = "probe"


def probe_runs(ladder, task):
    """The ladder's finished probe records of `task`, in the order a rung's encoder can be shared."""
    runs = [read_json(path) for path in sorted((ladder / RUNS_FOLDER).glob(f"*-{task}-{WAY}-*-seed*.json"))]
    return sorted(runs, key=lambda run: (parse_arm(run["arm"])[0], run["seed"], run["arm"]))


def beyond_grid(run, ladder, grid, vectors):
    """`run` (a ladder probe record) with its penalty chosen again on validation among `grid` (the ladder's
    grid and more): the ladder's own probe on the run's features, the chosen classifier scored on test.
    `vectors`: the rung's CachedVectors for the run's seed."""
    settings, seed = run["settings"], run["seed"]
    _, task, _, size = parse_arm(run["arm"])
    files = splits_of(settings, ladder, task)
    train_rows = read_rows(training_file(files, size, seed))

    def features_of(rows):  # the probe's features of TSV rows, as the ladder made them
        return sentence_features(vectors, rows)

    own = probe(features_of, files, train_rows)
    if any(own[key] != run["metrics"][key] for key in ("chosen", "validation_accuracy", "test_correct")):
        raise SystemExit(f"{run['arm']}, seed {seed}: the grid's own probe chose {own['chosen']} at "
                         f"{own['validation_accuracy']:.2f}%, the record {run['metrics']['chosen']} at "
                         f"{run['metrics']['validation_accuracy']:.2f}%, or other test answers: not the ladder's "
                         "features")
    kept = {key: run["metrics"][key] for key in ("train_examples", "per_class")}
    return {**run, "metrics": {**probe(features_of, files, train_rows, grid), **kept, "grid": grid}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", type=Path, required=True, help="a ladder folder (experiment ladder --full --out)")
    parser.add_argument("--task", default="doc-pairs", choices=list(LADDER_TASKS))
    parser.add_argument("--ridges", type=float, nargs="+", default=[1e5, 1e6, 1e7, 1e8],
                        help="the penalties added to the grid (above its largest, 10,000); the default's largest "
                             "exceeds the trace of any task's Gram matrix of standardised features (examples "
                             "times features, under 6 million), past which a larger penalty hardly turns the "
                             "classifier")
    parser.add_argument("--out", type=Path, required=True, help="the record to write (JSON)")
    arguments = parser.parse_args()
    runs = probe_runs(arguments.ladder, arguments.task)
    if not runs:
        raise SystemExit(f"{arguments.ladder}: no finished probe of {arguments.task}")
    results = ladder_results(arguments.ladder)
    print(describe_cpu())
    grid = sorted(RIDGE_GRID + tuple(arguments.ridges))
    extended, encoded, vectors = [], None, None  # one rung's vectors at a time: the runs come rung by rung
    for run in runs:
        started = time.perf_counter()
        rung = parse_arm(run["arm"])[0]
        key = (rung, run["seed"]) if rung == "random" else rung  # random weights are drawn per seed
        if key != encoded:
            encoded = key
            vectors = CachedVectors(sentence_encoder(run["settings"], rung, arguments.ladder, run["seed"]))
        extended.append(beyond_grid(run, arguments.ladder, grid, vectors))
        before, after = run["metrics"], extended[-1]["metrics"]
        print(f"{run['arm']}, seed {run['seed']}: ridge {before['chosen']['ridge']:g} -> {after['chosen']['ridge']:g}; "
              f"validation {before['validation_accuracy']:.1f} -> {after['validation_accuracy']:.1f}; "
              f"test {before['accuracy']:.1f} -> {after['accuracy']:.1f} ({time.perf_counter() - started:.0f} s)",
              flush=True)
    settings = {**runs[0]["settings"], "tasks": [arguments.task], "probe_grid": grid}
    write_edge_record(arguments.out, arguments.task, results, {"added_ridges": arguments.ridges}, settings,
                      code_version(), [{key: run[key] for key in ("arm", "seed", "metrics")} for run in extended])


if __name__ == "__main__":
    main()
