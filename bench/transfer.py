"""Does pretraining pay off on real text? Fine-tune on a task no one here wrote, from a checkpoint and from
random weights, with the finetune command's recipe, over several seeds.

    python3 bench/transfer.py --model runs/mini-pydocs              # 100, then 300 training sentences per label
    python3 bench/transfer.py --model runs/mini-pydocs --train-per-label 1000 --seeds 5
    python3 bench/transfer.py --model runs/mini-pydocs --task doc-pairs    # sentence pairs, 300 per label and library

Two tasks, both read from the documentation of the libraries pip carries in every virtual environment: rich
(terminal), urllib3 + requests (http), and pip's own code, distlib, pkg_resources and packaging (packaging).
None of them is in the pydocs corpus, and any sentence that is in the corpus the model was pretrained on is
dropped. Whole documents go to train or dev.
- `package-topics` (minibert/data/corpora/package_topics.py): which library does a sentence come from?
- `doc-pairs` (minibert/data/corpora/document_pairs.py): is sentence B one of the 3 after sentence A in A's
  document, or from another document of the same library? The relation NSP is meant to teach (paper §3.1).
The files are written to --task-dir (default: a temporary folder) as GLUE TSV, one folder per training-set
size, so the same comparison runs from the command line:

    python -m minibert finetune --task glue-tsv --train DIR/train.tsv --dev DIR/dev.tsv --model RUN --out OUT
    python -m minibert finetune ... --random-init

For each training-set size it prints the dev accuracy of the best epoch (what the command reports) as the
mean and spread (min to max) over the seeds of each start, and what pretraining is worth, the difference.
"""

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402

from minibert.data.build import resolve_corpus  # noqa: E402
from minibert.data.corpora import document_pairs, package_topics  # noqa: E402
from minibert.data.location import data_folder  # noqa: E402
from minibert.finetune import FineTuneConfig  # noqa: E402
from minibert.finetune.finetuning_run import run_finetuning  # noqa: E402

# --task -> (what writes its files, its labels, the default training sizes, the default dev size); a size is
# examples per label for package-topics, and per label and library for doc-pairs
TASKS = {
    "package-topics": (package_topics.build_package_topics, tuple(package_topics.LABELS), "100,300", 200),
    "doc-pairs": (document_pairs.build_document_pairs, document_pairs.LABELS, "300", 100),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a pretraining run folder (or from_pretrained folder)")
    parser.add_argument("--task", choices=TASKS, default="package-topics", help="package-topics (default) or doc-pairs")
    parser.add_argument("--train-per-label", default=None,
                        help="training examples per label (per label and library for doc-pairs), one comparison "
                             "per size (package-topics: 100,300; doc-pairs: 300)")
    parser.add_argument("--dev-per-label", type=int, default=None,
                        help="dev examples per label (package-topics: 200; doc-pairs: 100 per library)")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning seeds per start (3)")
    parser.add_argument("--corpus", default=None,
                        help="the corpus file the model was pretrained on, whose sentences are kept out of the "
                             "task (default: data/pydocs/corpus.txt, built if missing)")
    parser.add_argument("--lr", type=float, default=None, help="fine-tuning learning rate (default: the command's)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="fine-tuning epochs (default: the command's: 3, more for a small set)")
    parser.add_argument("--layer-decay", type=float, default=1.0,
                        help="the pretrained start's layer-wise learning-rate decay (1: none, as BERT)")
    parser.add_argument("--head-lr", type=float, default=None,
                        help="the pretrained start's learning rate for the pooler and head (default: --lr)")
    parser.add_argument("--reinit-pooler", action="store_true", help="the pretrained start's pooler drawn afresh")
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls",
                        help="the pretrained start's classifier input: the pooler's [CLS] (BERT) or the mean")
    parser.add_argument("--starts", default="pretrained,random",
                        help="which starts to fine-tune from (default both: pretrained,random)")
    parser.add_argument("--task-dir", default=None, help="where train.tsv and dev.tsv go (default: a temp dir)")
    args = parser.parse_args()
    if not set(args.starts.split(",")) <= {"pretrained", "random"}:
        parser.error(f"--starts {args.starts!r}: give pretrained, random or both, comma-separated")
    corpus = args.corpus or resolve_corpus("pydocs", data_folder() / "pydocs", log=lambda _: None)
    build, labels, sizes, dev_size = TASKS[args.task]
    sizes, dev_size = args.train_per_label or sizes, args.dev_per_label or dev_size
    task_root = Path(args.task_dir or tempfile.mkdtemp(prefix=f"minibert-{args.task}-"))
    print(f"CPU: {describe_cpu()}\nmodel {args.model}; task {args.task}: {', '.join(labels)}, {dev_size} dev "
          f"examples per label{' and library' if args.task == 'doc-pairs' else ''} (the same at every size); "
          f"corpus kept out: {corpus}")
    for size in [int(size) for size in sizes.split(",")]:
        train, dev = build(task_root / f"train{size}", size, dev_size, seed=0, pretraining_corpus=corpus)
        print(f"{size} training examples per label ({train.parent})")
        scores = {start: [accuracy(args, train, dev, start, seed) for seed in range(args.seeds)]
                  for start in args.starts.split(",")}
        for start, values in scores.items():
            print(f"  {start:10} mean {sum(values) / len(values):5.1f}%  (min {min(values):.1f}, "
                  f"max {max(values):.1f}, {len(values)} seeds)")
        if len(scores) == 2:
            gain = (sum(scores["pretrained"]) - sum(scores["random"])) / args.seeds
            print(f"  pretraining is worth {gain:+.1f} points of dev accuracy (chance: {100 / len(labels):.1f}%)",
                  flush=True)


def accuracy(args, train, dev, start, seed):
    """Dev accuracy (%) of the best epoch, as the finetune command reports it; one line as it ends (a
    fine-tuning of `mini` takes minutes on a slow machine, and the table waits for all of them)."""
    # The recipe's options are the pretrained start's: random weights have no layers worth keeping, so they
    # always get the command's recipe, the baseline every recipe is measured against.
    recipe = ({} if start == "random" else
              {"layer_decay": args.layer_decay, "head_lr": args.head_lr, "reinit_pooler": args.reinit_pooler,
               "pooling": args.pooling})
    settings = FineTuneConfig(learning_rate=args.lr, epochs=args.epochs, seed=seed, **recipe)
    started = time.perf_counter()
    _, _, result = run_finetuning("glue-tsv", args.model, train=train, dev=dev, settings=settings,
                                  random_init=start == "random", stream=io.StringIO(), log=None)
    score = 100 * result.best_metrics["accuracy"]
    print(f"    {start}, seed {seed}: {score:.1f}% at epoch {result.best_epoch} of {len(result.history)} "
          f"({time.perf_counter() - started:.0f} s)", flush=True)
    return score

if __name__ == "__main__":
    main()
