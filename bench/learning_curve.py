"""How fast does `mini` learn on a laptop? Pretrain it on `pydocs` for N minutes of wall time (default 30)
and print the held-out masked-LM and NSP accuracy every 10 minutes.

The floor to beat (the issue): a PyTorch run of the same recipe on the standard-library part of pydocs
(1.6 MB, vocabulary 8192, AdamW lr 5e-4, 10% warmup, batch 32, seq 128) reached held-out MLM accuracy
15.6% and NSP accuracy 65.5% after 30 minutes on 2 cores, on a plateau from minute 10.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/learning_curve.py     # 30 minutes
    python3 bench/learning_curve.py --minutes 10 --lr 5e-4                           # another recipe
    python3 bench/learning_curve.py --quick                                          # 1 minute

The run is the `mini` preset (see minibert/train/pretraining_config.py; --lr, --warmup and --max-seq-length change
it). Its steps are planned to fit the minutes on this machine. The evaluations read the whole held-out
split. The run folder keeps the log and the curves (loss.svg, accuracy.svg).
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.train.logs import read_log  # noqa: E402
from minibert.train.pretraining_config import run_preset  # noqa: E402
from minibert.train.pretraining_loop import pretrain  # noqa: E402


def main():
    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0, help="wall-clock minutes (30)")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps instead of minutes")
    parser.add_argument("--eval-every-steps", type=int, default=None, help="with --steps (default steps/6)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="any other PretrainingConfig field, e.g. --set adam_beta2=0.98 (repeatable)")
    parser.add_argument("--every", type=float, default=10.0, help="minutes between evaluations (10)")
    parser.add_argument("--quick", action="store_true", help="1 minute, evaluations every 0.5 minutes")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--warmup", type=float, default=None)
    parser.add_argument("--max-seq-length", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--max-predictions-per-seq", type=int, default=None)
    parser.add_argument("--vocab-size", type=int, default=None, help="of a newly trained vocabulary")
    parser.add_argument("--short-seq-length", type=int, default=None)
    parser.add_argument("--short-share", type=float, default=None)
    parser.add_argument("--data-dir", default=None, help="where pydocs lives (default data/pydocs)")
    parser.add_argument("--out", default=None, help="run folder (default: a temp dir)")
    args = parser.parse_args()
    minutes, every = (1.0, 0.5) if args.quick else (args.minutes, args.every)
    changes = {name: getattr(args, name) for name in ("seed", "lr", "warmup", "max_seq_length", "batch_size",
                                                       "max_predictions_per_seq", "vocab_size", "short_seq_length",
                                                       "short_share")
               if getattr(args, name) is not None}
    for setting in args.set:
        name, _, value = setting.partition("=")
        changes[name] = json.loads(value)
    # eval_every: step-based evaluations off; the timed ones (eval_every_minutes) read the whole split.
    if args.steps:
        config = run_preset("mini", corpus="pydocs", minutes=None, steps=args.steps, eval_batches=None,
                            eval_every=args.eval_every_steps or max(1, args.steps // 6), **changes)
    else:
        config = run_preset("mini", corpus="pydocs", minutes=minutes, steps=None, eval_every=10**9,
                            eval_batches=None, eval_every_minutes=every, **changes)
    out = Path(args.out or tempfile.mkdtemp(prefix="minibert-curve-"))
    print(f"mini on pydocs for {minutes:g} minutes: lr {config.lr:g}, warmup {config.warmup:g}, "
          f"seq {config.max_seq_length}, batch {config.batch_size}"
          + (f" (the first {config.short_share:.0%} of the steps at seq {config.short_seq_length})"
             if config.short_phase() else "") + f"; run folder {out}")
    pretrain(config, out, data_dir=args.data_dir, show_examples=False)
    print(f"{'minute':>7} {'step':>6} {'MLM acc':>8} {'NSP acc':>8} {'MLM loss':>9}")
    for record in read_log(out / "log.jsonl"):
        if record["kind"] == "eval":
            nsp = "-" if record["nsp_accuracy"] is None else f"{record['nsp_accuracy']:.1%}"
            print(f"{record['elapsed'] / 60:7.1f} {record['step']:6d} {record['mlm_accuracy']:8.1%} "
                  f"{nsp:>8} {record['mlm_loss']:9.3f}")


if __name__ == "__main__":
    main()
