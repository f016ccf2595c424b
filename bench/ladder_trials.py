"""Every fine-tuning behind a ladder's tuned runs, evaluation by evaluation, in one file a reader can keep.

A tuned fine-tuning run of the ladder (ladder_tuning.py) is three fine-tunings, one per learning rate, and
its record keeps of each only its best validation score and epoch: enough to check the choice, not to see how
a run went. Whether random weights sat on the plateau (training loss at ln of the number of labels) or
memorised their examples (training loss near zero, validation at chance) is in the fine-tunings' own
evaluations, which the ladder saves in its folder (`trials/<arm>-seed<k>/lr<rate>.json`) and a results record
does not hold. This gathers them, one line per fine-tuning (JSON Lines: the run, the rate, the epochs and
each evaluation's epoch, training loss and validation accuracy), for the runs a results record holds, and
checks each against that record: its best validation score and epoch must be the ones the run's record
gives for that rate, so a fine-tuning made again after the run was recorded is refused, not mixed in.

    python bench/ladder_trials.py --ladder runs/ladder-rerun --record runs/ladder-rerun/results-so-far.json \\
        --out docs/figures/experiment-ladder-second-rerun-trials.jsonl
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minibert.experiments.ladder_tuning import TRIALS_FOLDER, trial_path  # noqa: E402
from minibert.experiments.runner import read_json  # noqa: E402
from minibert.io.atomic import atomic_write  # noqa: E402


def trial_lines(ladder, record):
    """One dict per fine-tuning of each tuned run in `record`, read from `ladder`'s trials folder and checked
    against the run's own record of it."""
    lines = []
    for run in record["runs"]:
        for summary in run["metrics"].get("trials", []):
            rate = summary["learning_rate"]
            path = trial_path(ladder / TRIALS_FOLDER / f"{run['arm']}-seed{run['seed']}", rate)
            try:
                trial = read_json(path)
            except (OSError, ValueError) as error:
                raise SystemExit(f"{path}: cannot be read ({error}); a run's fine-tunings stay in its ladder folder, "
                                 "which --ladder must name") from None
            if (trial["validation_accuracy"], trial["best_epoch"]) != (summary["validation_accuracy"],
                                                                       summary["best_epoch"]):
                raise SystemExit(f"{path}: its best validation score and epoch are not the ones {run['arm']} seed "
                                 f"{run['seed']} was recorded with: made again since? Not gathered.")
            lines.append({"arm": run["arm"], "seed": run["seed"], "learning_rate": rate, "epochs": trial["epochs"],
                          "best_epoch": trial["best_epoch"],
                          "history": [[entry["epoch"], entry["train_loss"], entry["validation_accuracy"]]
                                      for entry in trial["history"]]})
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ladder", type=Path, required=True, help="a ladder folder (experiment ladder --full --out)")
    parser.add_argument("--record", type=Path, required=True,
                        help="its results.json, or the results-so-far.json of `--so-far`: the runs to gather")
    parser.add_argument("--out", type=Path, required=True, help="the file to write (JSON Lines)")
    args = parser.parse_args()
    lines = trial_lines(args.ladder, read_json(args.record))
    with atomic_write(args.out) as file:
        file.write("".join(json.dumps(line) + "\n" for line in lines).encode("utf-8"))
    print(f"{len(lines)} fine-tunings of {len({(line['arm'], line['seed']) for line in lines})} runs: {args.out}")


if __name__ == "__main__":
    main()
