"""`python -m minibert pretrain`: pretrain BERT on this computer and watch it learn.

    python -m minibert pretrain                          # mini on pydocs, about 15 minutes on 2 cores
    python -m minibert pretrain --preset tiny            # 2 layers on synthetic: about a minute
    python -m minibert pretrain --steps 2000 --lr 5e-4 --out runs/lr5e-4
    python -m minibert pretrain --resume --out runs/lr5e-4     # continue a stopped run, bit for bit

Data is built when missing (`python -m minibert data`). The run folder (`--out`, default
runs/<preset>-<corpus>) holds checkpoint.npz, vocab.txt, log.jsonl, loss.svg and accuracy.svg; give it
to `fill-mask --model` or `attention --model`. Ctrl-C stops after the current step and saves.

Every option left out comes from the preset (see minibert/train/presets.py). When resuming, options left
out come from the checkpoint, and only --minutes and the logging options may change.
"""

import time
from pathlib import Path

# option name -> (RunConfig field, type, help)
RUN_OPTIONS = {
    "--corpus": ("corpus", str, "pydocs, synthetic, or a corpus file (one sentence per line, blank line "
                                "between documents)"),
    "--seed": ("seed", int, "random seed of weights, dropout, batch order and masks"),
    "--steps": ("steps", int, "optimizer steps (alone, it lifts the time limit)"),
    "--minutes": ("minutes", float, "wall-clock limit; alone, it also plans the steps to fit"),
    "--lr": ("lr", float, "peak learning rate"),
    "--batch-size": ("batch_size", int, "sequences per step"),
    "--max-seq-length": ("max_seq_length", int, "tokens per sequence"),
    "--max-predictions-per-seq": ("max_predictions_per_seq", int, "masked positions per sequence at most"),
    "--vocab-size": ("vocab_size", int, "size of a newly trained vocabulary"),
    "--short-seq-length": ("short_seq_length", int, "tokens per sequence of the first, short steps"),
    "--short-share": ("short_share", float, "share of the steps on short sequences (0: none)"),
    "--warmup": ("warmup", float, "share of the steps spent warming the learning rate up"),
    "--weight-decay": ("weight_decay", float, "AdamW/BertAdam weight decay (not on LayerNorm and bias)"),
    "--optimizer": ("optimizer", str, "adamw, adam or bert_adam"),
    "--schedule": ("schedule", str, "linear (warmup, then decay to 0) or constant"),
    "--dropout": ("dropout", float, "hidden and attention dropout"),
    "--attention": ("attention", str, "bidirectional (BERT) or causal (GPT)"),
    "--threads": ("threads", int, "cores for the matmuls and kernels (default: every core)"),
    "--log-every": ("log_every", int, "steps between log records"),
    "--eval-every": ("eval_every", int, "steps between held-out evaluations"),
    "--eval-batches": ("eval_batches", int, "held-out batches per evaluation"),
    "--eval-every-minutes": ("eval_every_minutes", float, "also evaluate every this many minutes"),
    "--checkpoint-every": ("checkpoint_every", int, "steps between checkpoints"),
}


METAVARS = {int: "N", float: "X", str: "NAME"}


def add_arguments(parser):
    # No import of minibert.train here: building the parser must stay cheap for every command.
    parser.add_argument("--preset", default=None, metavar="tiny|mini",
                        help="run preset (default mini; when resuming, the checkpoint's)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="run folder for checkpoints, logs and curves (default runs/<preset>-<corpus>)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="where the corpus, vocabulary and shards live (default data/<corpus>)")
    for option, (field, kind, help_text) in RUN_OPTIONS.items():
        metavar = "pydocs|synthetic|PATH" if option == "--corpus" else METAVARS[kind]
        parser.add_argument(option, dest=field, type=kind, default=None, metavar=metavar, help=help_text)
    parser.add_argument("--no-nsp", dest="use_nsp", action="store_const", const=False, default=None,
                        help="masked LM only, no next-sentence prediction (RoBERTa)")
    parser.add_argument("--no-examples", dest="show_examples", action="store_false",
                        help="do not show the model filling masks at the end")


def run(args):
    from minibert.train.presets import run_preset
    from minibert.train.pretrain import pretrain
    from minibert.train.progress import ProgressLine
    from minibert.train.run_setup import train_fast

    fields = [field for field, _, _ in RUN_OPTIONS.values()] + ["use_nsp"]
    given = {field: getattr(args, field) for field in fields if getattr(args, field) is not None}
    preset = args.preset or "mini"
    corpus = given.get("corpus") or run_preset(preset).corpus
    out_dir = Path(args.out or Path("runs", f"{preset}-{Path(corpus).stem}"))
    progress = ProgressLine()
    start = time.perf_counter()

    def log(message):
        progress.message(f"[{time.perf_counter() - start:6.1f}s] {message}")

    log(train_fast())
    if args.resume:
        result = pretrain(None, out_dir, resume=True, overrides=given, data_dir=args.data_dir,
                          show_examples=args.show_examples, progress=progress, log=log)
    else:
        # One bound alone replaces both of the preset's: --steps 100 means 100 steps, however long
        # they take; --minutes 5 means as many steps as fit in 5 minutes.
        if "steps" in given and "minutes" not in given:
            given["minutes"] = None
        if "minutes" in given and "steps" not in given:
            given["steps"] = None
        config = run_preset(preset, **given)
        result = pretrain(config, out_dir, data_dir=args.data_dir, show_examples=args.show_examples,
                          progress=progress, log=log)
    if result.evaluation is not None:
        print(f"step {result.step}/{result.total_steps}: {result.evaluation.summary()}")
    print(f"run folder: {result.out_dir}")
    return 130 if result.stopped == "interrupted" else 0  # 130: the shell's code for a Ctrl-C
