"""A user's own training loop against the `pretrain` command's step, in one process, alternating.

The user's loop is what a reader of the README writes with the public API alone: a BertForPreTraining,
`minibert.fast.accelerate(model, prune_last_layer=True)` and `with minibert.fast.process_plan():` (the two
explicit calls the command makes too), then model -> pretraining_loss -> backward -> AdamW.step
(bench/compare_torch.py's `MinibertStep`). The command's step is `train_step` (BERT's weight-decay groups,
clipping, the schedule, accuracy counts) on a model built and accelerated as `pretrain` builds it
(bench/pretrain_step.py). Both: `mini`, B = 32, S = 128, P = 20, dropout 0.1 (BERT's, as
bench/compare_torch.py). Prints the CPU, the median seconds per step of each and their ratio (target: the
user's loop within 5% of the command's).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/user_loop.py [--steps 10]
"""

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from compare_torch import MinibertStep, load_average, timed_step  # noqa: E402  (bench/compare_torch.py)
from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)
from model import describe_threads, make_batch  # noqa: E402  (bench/model.py)
from pretrain_step import minibert_step  # noqa: E402  (bench/pretrain_step.py)

import minibert  # noqa: E402
from minibert.train.pretraining_config import run_preset  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps of each, alternating (10)")
    args = parser.parse_args()

    config = minibert.BertConfig.preset("mini")  # dropout 0.1
    batch = make_batch(config, 32, 128, 20, np.random.default_rng(0))
    run_config = run_preset("mini", dropout=config.hidden_dropout_prob, batch_size=32, max_seq_length=128,
                            max_predictions_per_seq=20)
    with minibert.fast.process_plan(run_config.threads):  # the user's loop asks for it, as the command does
        user = MinibertStep(config, batch)  # accelerated: minibert.fast.accelerate(model, prune_last_layer=True)
        timed_step(user)  # warm-up
        command = minibert_step(run_config, batch)
        command()  # warm-up
        times = {"user's loop": [], "pretrain command": []}
        for _ in range(args.steps):
            times["user's loop"].append(timed_step(user)["step"])
            started = time.perf_counter()
            command()
            times["pretrain command"].append(time.perf_counter() - started)

    print(f"{describe_cpu()}; {datetime.date.today()}; {load_average()}")
    describe_threads()
    print(f"process plan on (both); mini, B=32 S=128 P=20, dropout 0.1, "
          f"{args.steps} steps each, alternating")
    medians = {name: statistics.median(seconds) for name, seconds in times.items()}
    for name, seconds in times.items():
        print(f"{name:18s} median {medians[name]:.3f} s/step (min {min(seconds):.3f}, max {max(seconds):.3f})")
    ratio = medians["user's loop"] / medians["pretrain command"]
    print(f"user's loop / pretrain command: {ratio:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
