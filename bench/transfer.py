"""Does pretraining pay off on real text? Fine-tune on a task no one here wrote, from a checkpoint and from
random weights, with the finetune command's recipe, over several seeds.

    python3 bench/transfer.py --model runs/mini-pydocs                 # 300 training sentences per label
    python3 bench/transfer.py --model runs/mini-pydocs --train-per-label 1000 --seeds 5

The task (minibert/data/corpora/package_topics.py): which library a documentation sentence comes from:
rich (terminal), urllib3 + requests (http), or pip's own code, distlib, pkg_resources and packaging
(packaging), read from the copies pip carries in every virtual environment. None of them is in the pydocs
corpus, and any sentence that is in the corpus the model was pretrained on is dropped. Whole documents go
to train or dev. The files are written to --task-dir (default: a temporary folder) as GLUE TSV, so the same
comparison runs from the command line:

    python -m minibert finetune --task glue-tsv --train DIR/train.tsv --dev DIR/dev.tsv --model RUN --out OUT
    python -m minibert finetune ... --random-init

It prints the dev accuracy of the best epoch (what the command reports) for each seed, then the mean and
the spread (min to max) of each start, and the machine it ran on.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="a pretraining run folder (or from_pretrained folder)")
    parser.add_argument("--train-per-label", type=int, default=300, help="training sentences per label (300)")
    parser.add_argument("--dev-per-label", type=int, default=200, help="dev sentences per label (200)")
    parser.add_argument("--seeds", type=int, default=3, help="fine-tuning seeds per start (3)")
    parser.add_argument("--corpus", default=None,
                        help="the corpus file the model was pretrained on, whose sentences are kept out of the "
                             "task (default: data/pydocs/corpus.txt, built if missing)")
    parser.add_argument("--lr", type=float, default=None, help="fine-tuning learning rate (default: the command's)")
    parser.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs (default: the command's 3)")
    parser.add_argument("--starts", default="pretrained,random",
                        help="which starts to fine-tune from (default both: pretrained,random)")
    parser.add_argument("--task-dir", default=None, help="where train.tsv and dev.tsv go (default: a temp dir)")
    args = parser.parse_args()
    if not set(args.starts.split(",")) <= {"pretrained", "random"}:
        parser.error(f"--starts {args.starts!r}: give pretrained, random or both, comma-separated")
    corpus = args.corpus or resolve_corpus("pydocs", Path("data", "pydocs"), log=lambda _: None)
    task_dir = Path(args.task_dir or tempfile.mkdtemp(prefix="minibert-topics-"))
    train, dev = build_package_topics(task_dir, args.train_per_label, args.dev_per_label, seed=0,
                                      pretraining_corpus=corpus)
    print(f"{describe_cpu()}\nmodel {args.model}; task: {', '.join(LABELS)} ({args.train_per_label} training and "
          f"{args.dev_per_label} dev sentences per label) in {task_dir}; corpus kept out: {corpus}")
    scores = {}
    for start in args.starts.split(","):
        random_init = start == "random"
        for seed in range(args.seeds):
            settings = FineTuneConfig(learning_rate=args.lr, epochs=args.epochs, seed=seed)
            _, _, result = run_finetuning("glue-tsv", args.model, train=train, dev=dev, settings=settings,
                                          random_init=random_init,
                                          stream=io.StringIO(), log=None)
            scores.setdefault(start, []).append(100 * result.best_metrics["accuracy"])
            print(f"{start:10} seed {seed}: dev accuracy {scores[start][-1]:5.1f}%", flush=True)
    for start, values in scores.items():
        print(f"{start:10} mean {sum(values) / len(values):5.1f}%  (min {min(values):.1f}, max {max(values):.1f})")
    if len(scores) == 2:
        gain = sum(scores["pretrained"]) / args.seeds - sum(scores["random"]) / args.seeds
        print(f"pretraining is worth {gain:+.1f} points of dev accuracy (chance: {100 / len(LABELS):.1f}%)")


if __name__ == "__main__":
    main()
