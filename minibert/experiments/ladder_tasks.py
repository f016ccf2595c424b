"""The ladder's task files: each task written once with every labelled example it has, and, for each seed,
k examples a class drawn from them.

A task's folder (inside the experiment's --out) holds `train.tsv` (all of them, the classes balanced) and
`dev.tsv`, as GLUE TSV that `finetune --task glue-tsv` reads, and `train-<k>-seed<s>.tsv` for each size and
seed. Every sentence of the corpora the rungs pretrained on (pydocs, and pydocs-large when a rung read it)
is left out of every task, as the finetune command's own files leave pydocs' out
(minibert/finetune/tasks.py): a rung must never have pretrained on a dev sentence.
"""

import random
from dataclasses import dataclass
from pathlib import Path

from minibert.data.build import resolve_corpus
from minibert.data.corpora.dependency_topics import build_dependency_topics
from minibert.data.corpora.document_pairs import build_document_pairs
from minibert.data.corpora.package_topics import build_package_topics, write_tsv
from minibert.data.location import data_folder
from minibert.errors import DataError

# task -> (what writes its files, how many classes its dev set's size is shared among per call): pairs are
# built per library (3 of them), a `same` and an `other` pair each time, so a class holds 3 per library.
LADDER_TASKS = {
    "package-topics": (build_package_topics, 1),
    "doc-pairs": (build_document_pairs, 3),
    "dependency-topics": (build_dependency_topics, 1),
}
TASK_SEED = 0  # which documents go to dev: the same for every rung, size and seed


@dataclass(frozen=True)
class TaskFiles:
    train: Path  # every training example the task has
    dev: Path


def read_rows(path):
    """The rows of a GLUE TSV file written by `write_tsv`: tuples of fields, the label last, no header."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines[1:]]


def task_files(task, root, dev_per_class, kept_out=("pydocs",)):
    """The TaskFiles of `task` in `root`/<task>, written first when missing, without the sentences of the
    built-in corpora named in `kept_out` (built first when missing)."""
    folder = Path(root) / task
    files = TaskFiles(folder / "train.tsv", folder / "dev.tsv")
    if not (files.train.is_file() and files.dev.is_file()):
        build, libraries = LADDER_TASKS[task]
        corpora = [resolve_corpus(name, data_folder() / name, log=lambda _: None) for name in kept_out]
        build(folder, None, dev_per_class // libraries, TASK_SEED, pretraining_corpus=corpora)
    return files


def training_file(files, size, seed):
    """The training file of `size` examples a class ("all": every one) drawn with `seed`, written once."""
    if size == "all":
        return files.train
    path = files.train.with_name(f"train-{size}-seed{seed}.tsv")
    if not path.is_file():
        rows = read_rows(files.train)
        header = tuple(files.train.read_text(encoding="utf-8").split("\n", 1)[0].split("\t"))
        write_tsv(path, draw_per_class(rows, int(size), seed), header)
    return path


def draw_per_class(rows, count, seed):
    """`count` rows of each label (the last field), drawn with `seed`, in a shuffled order."""
    rng = random.Random(f"minibert-ladder/{seed}")
    by_label = {}
    for row in rows:
        by_label.setdefault(row[-1], []).append(row)
    drawn = []
    for label in sorted(by_label):
        if len(by_label[label]) < count:
            raise DataError(f"label {label!r} has {len(by_label[label])} training examples, fewer than the "
                            f"{count} asked for")
        drawn += rng.sample(by_label[label], count)
    rng.shuffle(drawn)
    return drawn
