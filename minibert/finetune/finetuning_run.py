"""One fine-tuning run from names and paths: what `python -m minibert finetune` and bench/finetune.py call.

    run_finetuning("sentiment", "runs/mini-synthetic", out_dir="runs/sentiment")

reads the task's files, builds its tokenizer from the model folder, takes the label set from the training
file, puts the task's head on the encoder (or on a fresh one, `random_init=True`), and fine-tunes.
"""

import contextlib
from dataclasses import replace
from pathlib import Path

from minibert.errors import ConfigError
from minibert.finetune.loop import FineTuneConfig, build_model, fine_tune
from minibert.finetune.tasks import data_files, make_task
from minibert.inspect.model_folder import check_model_folder, pretrained_length
from minibert.io.folder_lock import FolderLock
from minibert.io.overwrite import check_can_write
from minibert.io.sentence_layout import read_sentence_layout
from minibert.tokenizer import BertTokenizer
from minibert.train.logs import LOG_FILE


def run_finetuning(task_name, model_dir, out_dir=None, train=None, dev=None, settings=None, random_init=False,
                   task_options=None, stream=None, log=print, train_limit=None, dev_limit=None, overwrite=False):
    """Fine-tune on task `task_name`; returns (task, model, FineTuneResult).

    task_options: the task's settings (max_seq_length, doc_stride, regression, ...). train_limit and
    dev_limit keep only the first examples of each file (quick runs and tests). out_dir, if given, must not
    exist yet (or be empty) unless `overwrite`: it may hold an earlier fine-tuned model. It is locked while
    the run writes it.
    """
    check_model_folder(model_dir)  # a wrong --model stops here, before --out is touched
    if out_dir is not None:
        check_apart(out_dir, model_dir)
        check_can_write(out_dir, overwrite, "--out")
    with FolderLock(out_dir, "fine-tuning run") if out_dir is not None else contextlib.nullcontext():
        if out_dir is not None and overwrite:
            (Path(out_dir) / LOG_FILE).unlink(missing_ok=True)  # the log of the model being replaced
        settings = with_folder_pooling(settings or FineTuneConfig(), model_dir, random_init, log)
        train_path, dev_path = data_files(task_name, train, dev, log=log)
        task_options = task_options or {}
        task = make_task(task_name, BertTokenizer.from_pretrained(model_dir), **task_options)
        fit_pretrained_length(task, model_dir, task_options, log)
        train_examples = task.read(train_path)[:train_limit]
        dev_examples = task.read(dev_path)[:dev_limit]
        task.fit_labels(train_examples)
        model = build_model(task, model_dir, random_init, seed=settings.seed, verbose=log is not None)
        record = {"task": task_name, "model": str(model_dir), "random_init": random_init,
                  "train": str(train_path), "dev": str(dev_path)}
        result = fine_tune(task, model, train_examples, dev_examples, settings, out_dir, stream, record)
        return task, model, result


def check_apart(out_dir, model_dir):
    """Refuse an --out that is the --model folder, is inside it or holds it, even with --overwrite: the
    fine-tuned model, its log and report would replace the files of the model it starts from (a pretraining
    run's log, which its --resume then cannot read), or mix with them."""
    out, model = Path(out_dir).resolve(), Path(model_dir).resolve()  # the same folder, however it is spelled
    where = ("is" if out == model else "is inside" if out.is_relative_to(model)
             else "holds" if model.is_relative_to(out) else None)
    if where is not None:
        raise ConfigError(f"--out {out_dir} {where} the --model folder {model_dir}: the fine-tuned model would "
                          "replace or mix with the files of the model it starts from; give --out a folder apart "
                          "from it")


def with_folder_pooling(settings, model_dir, random_init, log):
    """`settings` with the pooling the model was trained with when it names none: the mean of the tokens for a
    sentence-transformers folder whose Pooling module takes the mean (all-MiniLM-L6-v2: its [CLS] and pooler
    were never trained by its last stage), else BERT's pooled [CLS]. Random weights were trained for
    nothing: BERT's."""
    if settings.pooling is not None:
        return settings
    layout = None if random_init else read_sentence_layout(model_dir)
    pooling = "mean" if layout is not None and layout.pooling == ("mean",) else "cls"
    if pooling == "mean" and log is not None:
        log(f"pooling: the mean of the tokens, as {model_dir} was trained to pool (its 1_Pooling/config.json); "
            "--pooling cls reads the pooler's [CLS] instead")
    return replace(settings, pooling=pooling)


def fit_pretrained_length(task, model_dir, task_options, log):
    """Shorten the task's default sequences to what a run folder's model was pretrained on: position
    embeddings past that length are still random, and the task would have to learn them from its few
    examples (mini pretrains at 128; QA's default is run_squad.py's 384: on the synthetic QA set, then of 300
    training passages, dev F1 74.3 with 384-token windows, 79.1 with 128-token ones, after 3 epochs).
    A length the user gave is kept."""
    length = pretrained_length(model_dir)
    if length is None or "max_seq_length" in task_options or task.max_seq_length <= length:
        return
    if log is not None:
        log(f"the model was pretrained on sequences of at most {length} tokens: max_seq_length "
            f"{task.max_seq_length} lowered to {length} (give --max-seq-length to choose)")
    task.max_seq_length = length
    if hasattr(task, "doc_stride") and "doc_stride" not in task_options:
        task.doc_stride = min(task.doc_stride, length // 2)  # so that consecutive windows overlap
