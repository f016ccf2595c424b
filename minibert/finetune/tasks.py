"""The tasks `python -m minibert finetune --task ...` knows, and where their data is.

Three kinds of task, each a module with the same parts (see `classification.py`):

    classification       ClassificationTask      sentiment (synthetic), glue-tsv (your GLUE-style TSV)
    question_answering   QuestionAnsweringTask   qa (synthetic), squad (your SQuAD v1.1 JSON)
    tagging              TaggingTask             ner (synthetic), conll (your CoNLL file)

The synthetic tasks read `data/synthetic/{sentiment,qa,ner}_{train,dev}.*`, written there first when missing.
"""

# When the synthetic files are missing (minibert installed without its repository) they are written
# there first, from the same seed.

from pathlib import Path

from minibert.data.corpora.synthetic import write_tasks
from minibert.errors import ConfigError
from minibert.finetune.classification import ClassificationTask
from minibert.finetune.question_answering import QuestionAnsweringTask
from minibert.finetune.tagging import TaggingTask

TASK_KINDS = {task.kind: task for task in (ClassificationTask, QuestionAnsweringTask, TaggingTask)}

# --task name -> (kind, file name pattern in data/synthetic, or None for the user's own files)
TASKS = {
    "sentiment": ("classification", "sentiment_{split}.tsv"),
    "qa": ("question_answering", "qa_{split}.json"),
    "ner": ("tagging", "ner_{split}.conll"),
    "glue-tsv": ("classification", None),
    "squad": ("question_answering", None),
    "conll": ("tagging", None),
}
SYNTHETIC_DIR = Path("data") / "synthetic"
SYNTHETIC_SEED = 0  # the seed of the committed files


def task_kind(name):
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}")
    return TASKS[name][0]


def make_task(name, tokenizer, **options):
    """A task object for `--task name`; options are its settings (max_seq_length, labels, ...)."""
    return TASK_KINDS[task_kind(name)](tokenizer, **options)


def data_files(name, train=None, dev=None, data_dir=SYNTHETIC_DIR, log=print):
    """(train file, dev file): the given ones, or the synthetic task's files for a synthetic task."""
    pattern = TASKS[name][1] if name in TASKS else None
    if pattern is None:
        if train is None or dev is None:
            raise ConfigError(f"--task {name} reads your own data: pass --train FILE and --dev FILE")
        return Path(train), Path(dev)
    data_dir = Path(data_dir)
    defaults = [data_dir / pattern.format(split=split) for split in ("train", "dev")]
    if not all(path.is_file() for path in defaults) and (train is None or dev is None):
        log(f"writing the synthetic fine-tuning sets to {data_dir} (seed {SYNTHETIC_SEED})")
        data_dir.mkdir(parents=True, exist_ok=True)
        write_tasks(data_dir, SYNTHETIC_SEED)
    return Path(train or defaults[0]), Path(dev or defaults[1])
