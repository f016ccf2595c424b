"""`python -m minibert pretrain`: pretrain BERT on this computer and watch it learn.

    python -m minibert pretrain                          # mini on pydocs, about 15 minutes on 2 cores
    python -m minibert pretrain --preset tiny            # 2 layers on synthetic: about a minute
    python -m minibert pretrain --resume --out runs/lr5e-4     # continue a stopped run, bit for bit

Data is built when missing (`python -m minibert data`). The run folder (`--out`, default
runs/<preset>-<corpus>) holds checkpoint.npz, vocab.txt, log.jsonl, loss.svg and accuracy.svg; give it
to `fill-mask --model` or `attention --model`. Ctrl-C stops after the current step and saves.
"""

# Another example, with its own steps and learning rate:
#     python -m minibert pretrain --steps 2000 --lr 5e-4 --out runs/lr5e-4
#
# Every option left out comes from the preset (see minibert/train/pretraining_config.py). When resuming, options left
# out come from the checkpoint, and only --minutes, --threads and the logging options may change.

import time
from pathlib import Path

from minibert.cli.arguments import real_number, seed, whole_number

# option name -> (PretrainingConfig field, parse, help). Each number is checked as it is parsed (cli/arguments.py);
# PretrainingConfig checks the combinations (a sequence too long for the preset's model, ...).
RUN_OPTIONS = {
    "--corpus": ("corpus", str, "pydocs, pydocs-large, synthetic, or a corpus file (one sentence per line, "
                                "blank line between documents)"),
    "--seed": ("seed", seed(), "random seed of weights, dropout, batch order and masks"),
    "--steps": ("steps", whole_number("the number of steps"), "optimizer steps (alone, it lifts the time limit)"),
    "--minutes": ("minutes", real_number("the time limit in minutes", 0, example=15),
                  "wall-clock limit; alone, it also plans the steps to fit"),
    "--lr": ("lr", real_number("the learning rate", 0, 1, example="1e-3"), "peak learning rate"),
    "--batch-size": ("batch_size", whole_number("the batch size (sequences per step)"), "sequences per step"),
    "--max-seq-length": ("max_seq_length", whole_number("the sequence length (tokens)", minimum=8),
                         "tokens per sequence"),
    "--max-predictions-per-seq": ("max_predictions_per_seq", whole_number("the masked positions per sequence"),
                                  "masked positions per sequence at most"),
    "--masked-lm-prob": ("masked_lm_prob", real_number("the masking rate", 0, 1, example=0.15),
                         "share of each training sequence to mask (held-out text: always 0.15)"),
    "--position-init": ("position_init", str, "start of the learned positions: normal (BERT) or sinusoidal"),
    "--attention-init": ("attention_init", str, "start of the query and key projections: normal (BERT) or "
                         "mimetic (heads first attend to similar tokens)"),
    "--dupe-factor": ("dupe_factor", whole_number("the passes over the training documents"),
                      "passes over the training documents when the data is built (Google: 10)"),
    "--vocab-size": ("vocab_size", whole_number("the vocabulary size (tokens)"), "size of a newly trained "
                     "vocabulary"),
    "--short-seq-length": ("short_seq_length", whole_number("the short sequence length (tokens)", minimum=8),
                           "tokens per sequence of the first, short steps"),
    "--short-share": ("short_share", real_number("the share of short steps", 0, 1, low_included=True),
                      "share of the steps on short sequences (0: none)"),
    "--warmup": ("warmup", real_number("the warmup share", 0, 1, low_included=True, example=0.1),
                 "share of the steps spent warming the learning rate up"),
    "--weight-decay": ("weight_decay", real_number("the weight decay", 0, low_included=True, example=0.01),
                       "AdamW/BertAdam weight decay (not on LayerNorm and bias)"),
    "--optimizer": ("optimizer", str, "adamw, adam or bert_adam"),
    "--schedule": ("schedule", str, "linear (warmup, then decay to 0), stable-decay (warmup, the peak, then "
                   "decay over the last --decay of the steps) or constant"),
    "--decay": ("decay", real_number("the share of steps cooling down", 0, 1, low_included=True, example=0.2),
                "with stable-decay: share of the steps cooling the learning rate down to 0"),
    "--adam-beta2": ("adam_beta2", real_number("Adam's beta2", 0, 1, example=0.999),
                     "decay of Adam's second moment (BERT: 0.999)"),
    "--dropout": ("dropout", real_number("the dropout probability", 0, 1, low_included=True, example=0.1),
                  "hidden and attention dropout"),
    "--attention": ("attention", str, "bidirectional (BERT) or causal (GPT)"),
    "--sentence-task": ("sentence_task", str, "the sentence-pair loss: nsp (BERT: is B the sentence after A?) or "
                        "sop (ALBERT: are A and B in their order?); --no-nsp for none"),
    "--threads": ("threads", whole_number("the number of threads"), "cores for the matmuls and kernels "
                  "(default: every core)"),
    "--log-every": ("log_every", whole_number("the steps between log records"), "steps between log records"),
    "--eval-every": ("eval_every", whole_number("the steps between evaluations"),
                     "steps between held-out evaluations"),
    "--eval-batches": ("eval_batches", whole_number("the batches per evaluation"),
                       "held-out batches per evaluation"),
    "--eval-every-minutes": ("eval_every_minutes", real_number("the minutes between evaluations", 0),
                             "also evaluate every this many minutes"),
    "--checkpoint-every": ("checkpoint_every", whole_number("the steps between checkpoints"),
                           "steps between checkpoints"),
}


def add_arguments(parser):
    # No import of minibert.train here: building the parser must stay cheap for every command.
    parser.add_argument("--preset", default=None, metavar="tiny|mini",
                        help="run preset (default mini; when resuming, the checkpoint's)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="run folder for checkpoints, logs and curves (default runs/<preset>-<corpus>)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument("--overwrite", action="store_true",
                        help="start afresh in --out even if it holds a run or other files (a new run "
                             "otherwise needs a new or empty folder); files of a run's names are replaced")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="where the corpus, vocabulary and shards live (default <data folder>/<corpus>)")
    for option, (field, parse, help_text) in RUN_OPTIONS.items():
        metavar = "pydocs|pydocs-large|synthetic|PATH" if option == "--corpus" else "NAME" if parse is str else "N"
        parser.add_argument(option, dest=field, type=parse, default=None, metavar=metavar, help=help_text)
    parser.add_argument("--no-nsp", dest="use_nsp", action="store_const", const=False, default=None,
                        help="masked LM only, no next-sentence prediction (RoBERTa)")
    parser.add_argument("--no-short-phase-nsp", dest="short_phase_nsp", action="store_const", const=False,
                        default=None, help="next-sentence prediction on the full-length steps only, not the "
                                           "short ones (docs/learning.md)")
    parser.add_argument("--plain", dest="plain", action="store_const", const=True, default=None,
                        help="train the core's plain layers, without the speed layer (minibert/fast): slower")
    parser.add_argument("--no-examples", dest="show_examples", action="store_false",
                        help="do not show the model filling masks at the end")


def run(args):
    from minibert.train.pretraining_config import run_preset
    from minibert.train.pretraining_loop import pretrain
    from minibert.train.progress import ProgressLine

    fields = [field for field, _, _ in RUN_OPTIONS.values()] + ["use_nsp", "short_phase_nsp", "plain"]
    given = {field: getattr(args, field) for field in fields if getattr(args, field) is not None}
    preset = args.preset or "mini"
    corpus = given.get("corpus") or run_preset(preset).corpus
    out_dir = Path(args.out or Path("runs", f"{preset}-{Path(corpus).stem}"))
    progress = ProgressLine()
    start = time.perf_counter()

    def log(message):
        progress.message(f"[{time.perf_counter() - start:6.1f}s] {message}")

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
                          progress=progress, log=log, overwrite=args.overwrite, started=start)
    if result.evaluation is not None:
        print(f"step {result.step}/{result.total_steps}: {result.evaluation.summary()}")
    print(f"run folder: {result.out_dir}")
    return 130 if result.stopped == "interrupted" else 0  # 130: the shell's code for a Ctrl-C
