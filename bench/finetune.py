"""Fine-tune on the three synthetic tasks from a checkpoint and from random weights, and time each run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/finetune.py --model runs/mini-synthetic
    python3 bench/finetune.py --model runs/mini-synthetic --epochs 6 --tasks sentiment,ner
    python3 bench/finetune.py --quick            # a minute or two: small subsets, one epoch, a tiny model

For each task (sentiment: dev accuracy; qa: dev F1 and EM; ner: dev entity F1) it runs the finetune
command's recipe twice: from the checkpoint's encoder, and from a random encoder of the same config and
vocabulary, so that the difference is what pretraining is worth. It prints one line per run with the
wall time. The issue's targets (from a `mini` checkpoint): sentiment >= 95% accuracy, QA >= 90 F1,
NER >= 90 entity F1.

The checkpoint's vocabulary must cover the tasks' text: the bench prints the share of [UNK] tokens
(a vocabulary trained on the pydocs corpus has no Chinese characters, and half of each set is Chinese).
Without --model, a random `tiny` model with a vocabulary of the task files stands in (random init only).
"""

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu import describe_cpu  # noqa: E402  (bench/cpu.py)

from minibert.finetune import FineTuneConfig  # noqa: E402
from minibert.finetune.finetuning_run import run_finetuning  # noqa: E402
from minibert.finetune.loop import unknown_share  # noqa: E402
from minibert.finetune.tasks import data_files, make_task  # noqa: E402
from minibert.model import BertConfig, BertModel  # noqa: E402
from minibert.tokenizer import BertTokenizer, train_wordpiece  # noqa: E402

TASKS = ("sentiment", "qa", "ner")
SHOWN = {"sentiment": ("accuracy", 100), "qa": ("f1", 1), "ner": ("f1", 100)}  # metric, scale to percent
QUICK = {"train_limit": {"sentiment": 400, "qa": 150, "ner": 200}, "dev_limit": 100, "epochs": 1}


def stand_in_model(folder):
    """A random `tiny` from_pretrained folder whose vocabulary is learned from the three training files."""
    files = [path for task in TASKS for path in data_files(task, log=lambda _: None)[:1]]
    tokens = train_wordpiece([str(path) for path in files], 2000, out=folder / "vocab.txt")
    BertModel(BertConfig.preset("tiny", vocab_size=len(tokens))).save_pretrained(folder)
    return folder


def unknown_report(model_dir, task_name):
    task = make_task(task_name, BertTokenizer.from_pretrained(model_dir))
    examples = task.read(data_files(task_name, log=lambda _: None)[0])[:300]
    task.fit_labels(examples)
    return unknown_share(task, task.encode(examples, training=True))


def main():
    print(f"CPU: {describe_cpu()}")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="run folder or from_pretrained folder (default: a random tiny model)")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, from sentiment,qa,ner")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs (default: the command's: 3, more for a small set)")
    parser.add_argument("--lr", type=float, default=None, help="learning rate (default: the command's)")
    parser.add_argument("--qa-max-seq-length", type=int, default=None,
                        help="QA window length (default: the command's, 384 cut to the pretraining length)")
    parser.add_argument("--qa-doc-stride", type=int, default=None,
                        help="QA window step in tokens (default: the command's, 128 or half the window)")
    parser.add_argument("--quick", action="store_true", help="small subsets and one epoch: a smoke run")
    parser.add_argument("--verbose", action="store_true", help="show each run's progress and epochs")
    args = parser.parse_args()
    tasks = args.tasks.split(",")
    temporary = None
    if args.model is None:
        temporary = tempfile.TemporaryDirectory()
        model_dir, inits = stand_in_model(Path(temporary.name)), (True,)
        print("no --model: a random tiny model stands in, so only random initialisation is measured")
    else:
        model_dir, inits = Path(args.model), (False, True)
    epochs = QUICK["epochs"] if args.quick else args.epochs
    sizes = f"quick: subsets of {QUICK['train_limit']}" if args.quick else "full sets"
    print(f"model {model_dir}; {sizes}")
    for task_name in tasks:
        print(f"{task_name}: {unknown_report(model_dir, task_name):.1%} of the training tokens are [UNK]")
    print(f"{'task':10} {'start':10} {'metric':18} {'value':>7} {'epochs':>6} {'seconds':>8}")
    for task_name in tasks:
        for random_init in inits:
            settings = FineTuneConfig(learning_rate=args.lr, epochs=epochs)
            given = {"max_seq_length": args.qa_max_seq_length, "doc_stride": args.qa_doc_stride}
            options = {name: value for name, value in given.items() if value is not None and task_name == "qa"}
            started = time.perf_counter()
            _, _, result = run_finetuning(
                task_name, model_dir, settings=settings, random_init=random_init, task_options=options,
                stream=None if args.verbose else io.StringIO(), log=print if args.verbose else None,
                train_limit=QUICK["train_limit"][task_name] if args.quick else None,
                dev_limit=QUICK["dev_limit"] if args.quick else None)
            metric, scale = SHOWN[task_name]
            value = result.best_metrics[metric] * scale
            extra = f" (EM {result.best_metrics['exact_match']:.1f})" if task_name == "qa" else ""
            print(f"{task_name:10} {'random' if random_init else 'pretrained':10} "
                  f"{('dev ' + metric + extra):18} {value:7.1f} {len(result.history):6d} "
                  f"{time.perf_counter() - started:8.1f}", flush=True)
    if temporary is not None:
        temporary.cleanup()


if __name__ == "__main__":
    main()
