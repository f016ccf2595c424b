"""Does pretraining pay off on real text? Fine-tune on a task no one here wrote, from a checkpoint and from
random weights, with the finetune command's recipe, over several seeds.

    python3 bench/transfer.py --model runs/mini-pydocs              # 100, then 300 training sentences per label
    python3 bench/transfer.py --model runs/mini-pydocs --train-per-label 1000 --seeds 5

The task (minibert/data/corpora/package_topics.py): which library a documentation sentence comes from:
rich (terminal), urllib3 + requests (http), or pip's own code, distlib, pkg_resources and packaging
(packaging), read from the copies pip carries in every virtual environment. None of them is in the pydocs
corpus, and any sentence that is in the corpus the model was pretrained on is dropped. Whole documents go
to train or dev. The files are written to --task-dir (default: a temporary folder) as GLUE TSV, one folder per
training-set size, so the same comparison runs from the command line:

    python -m minibert finetune --task glue-tsv --train DIR/train.tsv --dev DIR/dev.tsv --model RUN --out OUT
    python -m minibert finetune ... --random-init

For each training-set size it prints the dev accuracy of the best epoch (what the command reports) as the
mean and spread (min to max) over the seeds of each start, and what pretraining is worth, the difference.
"""

import argparse
import io
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402

from minibert.data.build import resolve_corpus  # noqa: E402
from minibert.data.corpora.package_topics import LABELS, build_package_topics  # noqa: E402
from minibert.finetune import FineTuneConfig  # noqa: E402
from minibert.finetune.run import run_finetuning  # noqa: E402
from minibert.train.run_setup import train_fast  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a pretraining run folder (or from_pretrained folder)")
    parser.add_argument("--train-per-label", default="100,300",
                        help="training sentences per label, one comparison per size (100,300)")
    parser.add_argument("--dev-per-label", type=int, default=200, help="dev sentences per label (200)")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning seeds per start (3)")
    parser.add_argument("--corpus", default=None,
                        help="the corpus file the model was pretrained on, whose sentences are kept out of the "
                             "task (default: data/pydocs/corpus.txt, built if missing)")
    parser.add_argument("--lr", type=float, default=None, help="fine-tuning learning rate (default: the command's)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="fine-tuning epochs (default: the command's: 3, more for a small set)")
    parser.add_argument("--starts", default="pretrained,random",
                        help="which starts to fine-tune from (default both: pretrained,random)")
    parser.add_argument("--task-dir", default=None, help="where train.tsv and dev.tsv go (default: a temp dir)")
    args = parser.parse_args()
    if not set(args.starts.split(",")) <= {"pretrained", "random"}:
        parser.error(f"--starts {args.starts!r}: give pretrained, random or both, comma-separated")
    train_fast()  # the fused ops, as the finetune command runs
    corpus = args.corpus or resolve_corpus("pydocs", Path("data", "pydocs"), log=lambda _: None)
    task_root = Path(args.task_dir or tempfile.mkdtemp(prefix="minibert-topics-"))
    print(f"CPU: {describe_cpu()}\nmodel {args.model}; task: {', '.join(LABELS)}, {args.dev_per_label} dev sentences "
          f"per label (the same at every size); corpus kept out: {corpus}")
    for size in [int(size) for size in args.train_per_label.split(",")]:
        train, dev = build_package_topics(task_root / f"train{size}", size, args.dev_per_label, seed=0,
                                          pretraining_corpus=corpus)
        print(f"{size} training sentences per label ({train.parent})")
        scores = {start: [accuracy(args, train, dev, start == "random", seed) for seed in range(args.seeds)]
                  for start in args.starts.split(",")}
        for start, values in scores.items():
            print(f"  {start:10} mean {sum(values) / len(values):5.1f}%  (min {min(values):.1f}, "
                  f"max {max(values):.1f}, {len(values)} seeds)")
        if len(scores) == 2:
            gain = (sum(scores["pretrained"]) - sum(scores["random"])) / args.seeds
            print(f"  pretraining is worth {gain:+.1f} points of dev accuracy (chance: {100 / len(LABELS):.1f}%)",
                  flush=True)


def accuracy(args, train, dev, random_init, seed):
    """Dev accuracy (%) of the best epoch, as the finetune command reports it."""
    settings = FineTuneConfig(learning_rate=args.lr, epochs=args.epochs, seed=seed)
    _, _, result = run_finetuning("glue-tsv", args.model, train=train, dev=dev, settings=settings,
                                  random_init=random_init, stream=io.StringIO(), log=None)
    return 100 * result.best_metrics["accuracy"]

if __name__ == "__main__":
    main()
