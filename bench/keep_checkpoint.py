"""Keep a pretraining run's model in the repository: its weights without Adam's averages, its vocabulary and
its log, in a folder that the ladder, `finetune`, `embed` and `fill-mask` read as the run itself.

The ladder pins each rung by the sha256 of its weights and refuses a resumed rerun whose rung has others,
and a pretraining cannot be made again to the bit on another machine (the vector unit and the number of
threads change the last digits, and they grow). A rerun spread over days of sessions, on machines that are
replaced between them, can only resume on the same rungs if their weights are kept where the machine's
folders are not: so the ladder's checkpoints are kept in docs/figures/experiment-ladder-checkpoints/, a
third of a run folder's size (keep_weights_only in minibert/train/checkpointing.py).

    python bench/keep_checkpoint.py runs/mini-pydocs-15min docs/figures/experiment-ladder-checkpoints/15min
"""

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minibert.io.atomic import atomic_write  # noqa: E402
from minibert.io.pretrained import VOCAB_FILE  # noqa: E402
from minibert.train.checkpointing import CHECKPOINT_FILE, keep_weights_only  # noqa: E402
from minibert.train.logs import LOG_FILE  # noqa: E402


def keep(run, out):
    """Write `run`'s weights (without the optimizer's state), vocab.txt and log.jsonl into `out`; returns the
    sha256 of the weights kept, the one the ladder pins."""
    for name in (CHECKPOINT_FILE, VOCAB_FILE, LOG_FILE):
        if not (run / name).is_file():
            raise SystemExit(f"{run} has no {name}: give the folder of a finished `pretrain` run")
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} is not empty: give a new folder (a kept checkpoint is never replaced)")
    out.mkdir(parents=True, exist_ok=True)
    keep_weights_only(run / CHECKPOINT_FILE, out / CHECKPOINT_FILE)
    for name in (VOCAB_FILE, LOG_FILE):
        with atomic_write(out / name) as file:
            file.write((run / name).read_bytes())
    return hashlib.sha256((out / CHECKPOINT_FILE).read_bytes()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished pretraining run's folder")
    parser.add_argument("out", type=Path, help="a new folder to keep it in")
    args = parser.parse_args()
    sha = keep(args.run, args.out)
    before, after = ((folder / CHECKPOINT_FILE).stat().st_size / 2**20 for folder in (args.run, args.out))
    print(f"{args.out / CHECKPOINT_FILE}: {after:.1f} MiB (the run's checkpoint: {before:.1f} MiB), sha256 {sha}")


if __name__ == "__main__":
    main()
