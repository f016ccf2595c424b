"""The ladder's task files: each task written once with every labelled example it has, cut into the splits
the protocol needs, and, for each seed, k examples a class drawn from the training split.

The task's builder writes `labelled/train.tsv` (every labelled example, the classes balanced) and
`labelled/dev.tsv` (examples of documents held out whole). The held-out documents become `test.tsv`, scored
once per run and never used for a choice; `validation.tsv` is cut from the labelled pool (the same rows for
every rung, size and seed), and what remains is `train.tsv`, from which each seed draws its examples
(`train-<k>-seed<s>.tsv`). Epochs, the learning rate and the probe's penalty are chosen on validation.
`splits.json` holds each file's sha256 and the versions of the packages whose documentation the task reads,
so that a rerun can show it cut the same splits, and the document of each test row, by which the test set is
resampled (bootstrap.py). All are GLUE TSV that `finetune --task glue-tsv` reads.

Every sentence of the corpora the rungs pretrained on (pydocs, and pydocs-large when a rung read it) is left
out of every task, as the finetune command's own files leave pydocs' out (minibert/finetune/tasks.py): a
rung must never have pretrained on a test sentence.
"""

# The validation rows come from the training documents, so a validation sentence may have a neighbour among
# the training examples: the choice of epochs and rate sees slightly optimistic scores, but the test set's
# documents stay apart from both, and the reported number is the test set's.

import hashlib
import importlib.metadata
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from minibert.data.build import resolve_corpus
from minibert.data.corpora import dependency_topics, package_topics
from minibert.data.corpora.dependency_topics import build_dependency_topics
from minibert.data.corpora.document_pairs import build_document_pairs
from minibert.data.corpora.package_topics import (
    build_package_topics,
    corpus_sentences,
    first_occurrences,
    labelled_documents,
    write_tsv,
)
from minibert.data.location import data_folder
from minibert.errors import DataError
from minibert.experiments.bootstrap import pack_documents
from minibert.io.atomic import atomic_write


@dataclass(frozen=True)
class LadderTask:
    build: Callable  # writes labelled/train.tsv and labelled/dev.tsv (a builder of minibert/data/corpora)
    # how many parts its held-out size is shared among per call: pairs are built per library (3 of them), a
    # `same` and an `other` pair each time, so a class holds 3 per library
    parts: int
    sources: dict  # {label: module patterns}: the modules whose documentation it reads

    def documents(self, pretraining_corpus):
        """{label: [[sentence, ...] per document]}: the documents its rows are cut from, without the sentences
        of the pretraining corpora, as its builder reads them."""
        return labelled_documents(corpus_sentences(pretraining_corpus), self.sources)


LADDER_TASKS = {
    "package-topics": LadderTask(build_package_topics, 1, package_topics.LABELS),
    "doc-pairs": LadderTask(build_document_pairs, 3, package_topics.LABELS),
    "dependency-topics": LadderTask(build_dependency_topics, 1, dependency_topics.LABELS),
}
TASK_SEED = 0  # which documents are held out, and which rows validate: the same for every rung, size and seed
SPLITS_FILE = "splits.json"


@dataclass(frozen=True)
class TaskFiles:
    train: Path  # every training example the task has, less the validation rows
    validation: Path  # cut from the labelled pool: what every choice is made on
    test: Path  # documents held out whole: scored once per run


def read_rows(path):
    """The rows of a GLUE TSV file written by `write_tsv`: tuples of fields, the label last, no header."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines[1:]]


def task_files(task, root, validation_per_class, test_per_class, kept_out=("pydocs",)):
    """The TaskFiles of `task` in `root`/<task>, written first when missing (each file whole or absent, so a
    stopped first run writes them again), without the sentences of the built-in corpora named in `kept_out`
    (built first when missing)."""
    folder = Path(root) / task
    files = TaskFiles(folder / "train.tsv", folder / "validation.tsv", folder / "test.tsv")
    if (folder / SPLITS_FILE).is_file():  # written last: the splits are whole
        manifest = read_splits(folder)
        if "test_documents" not in manifest:  # cut before the test set was resampled by document: add them
            write_splits_file(folder, {**manifest, "test_documents": find_test_documents(
                task, files.test, manifest["kept_out"], manifest["sources"])})
        return files
    ladder_task = LADDER_TASKS[task]
    labelled = folder / "labelled"
    if not (labelled / "train.tsv").is_file() or not (labelled / "dev.tsv").is_file():
        ladder_task.build(labelled, None, test_per_class // ladder_task.parts, TASK_SEED,
                          pretraining_corpus=kept_out_corpora(kept_out))
    header = header_of(labelled / "train.tsv")
    pool = read_rows(labelled / "train.tsv")
    validation = draw_per_class(pool, validation_per_class, f"validation/{TASK_SEED}")
    chosen = set(validation)
    write_tsv(files.train, [row for row in pool if row not in chosen], header)
    write_tsv(files.validation, validation, header)
    write_tsv(files.test, read_rows(labelled / "dev.tsv"), header)
    manifest = {"sha256": {path.name: file_sha256(path) for path in (files.train, files.validation, files.test)},
                "rows": {path.name: len(read_rows(path)) for path in (files.train, files.validation, files.test)},
                "sources": source_versions(ladder_task.sources), "kept_out": list(kept_out), "task_seed": TASK_SEED}
    write_splits_file(folder, {**manifest, "test_documents": find_test_documents(task, files.test, kept_out,
                                                                                 manifest["sources"])})
    return files


def kept_out_corpora(kept_out):
    """The files of the built-in corpora named in `kept_out` (built first when missing)."""
    return [resolve_corpus(name, data_folder() / name, log=lambda _: None) for name in kept_out]


def write_splits_file(folder, manifest):
    with atomic_write(Path(folder) / SPLITS_FILE) as file:
        file.write((json.dumps(manifest, indent=1) + "\n").encode("utf-8"))


def find_test_documents(task, test_file, kept_out, sources):
    """Each test row's document, packed (bootstrap.pack_documents): the documents numbered in the order the
    rows meet them, a pair's two sentences each with its own. The test set is resampled document by document.
    sources: the versions of the packages the rows were cut from ({distribution: version}), which the
    documents must be read from again."""
    installed = source_versions(LADDER_TASKS[task].sources)
    if installed != sources:
        raise DataError(f"{test_file} was cut from {versions_text(sources)}, this environment has "
                        f"{versions_text(installed)}: the documents of its rows are read from the packages "
                        "themselves, so install those versions, or cut the tasks again in a new --out")
    documents = first_occurrences(LADDER_TASKS[task].documents(kept_out_corpora(kept_out)))
    where = {" ".join(sentence.split()): (label, index)  # as write_tsv wrote it
             for label, docs in documents.items() for index, doc in enumerate(docs) for sentence in doc}
    numbers, found = {}, []
    for row in read_rows(test_file):
        missing = [text for text in row[:-1] if text not in where]
        if missing:
            raise DataError(f"{test_file}: the test sentence {missing[0]!r} is in none of the documents of "
                            f"{versions_text(sources)}, which it was cut from; was the file changed? Cut the tasks "
                            "again in a new --out")
        found.append([numbers.setdefault(where[text], len(numbers)) for text in row[:-1]])
    return pack_documents(found)


def read_splits(folder):
    """What `task_files` wrote in `folder`/splits.json: the files' sha256, their rows, the sources' versions,
    the test rows' documents."""
    return json.loads((Path(folder) / SPLITS_FILE).read_text(encoding="utf-8"))


def header_of(path):
    return tuple(Path(path).read_text(encoding="utf-8").split("\n", 1)[0].split("\t"))


def file_sha256(path, chunk=1 << 20):
    """The sha256 of a file's bytes, in hex, read a megabyte at a time (weights files are large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def source_versions(labels):
    """{distribution: version} of the installed packages that hold the modules of `labels` ({label: module
    patterns}): the text a task is cut from changes with them."""
    distributions = importlib.metadata.packages_distributions()
    tops = {pattern.split(".")[0] for patterns in labels.values() for pattern in patterns}
    names = sorted({name for top in tops for name in distributions.get(top, [])})
    return {name: importlib.metadata.version(name) for name in names}


def versions_text(versions):
    return ", ".join(f"{name} {version}" for name, version in versions.items()) or "no package"


def training_file(files, size, seed):
    """The training file of `size` examples a class ("all": every one) drawn with `seed`, written once."""
    if size == "all":
        return files.train
    path = files.train.with_name(f"train-{size}-seed{seed}.tsv")
    if not path.is_file():
        write_tsv(path, draw_per_class(read_rows(files.train), int(size), seed), header_of(files.train))
    return path


def draw_per_class(rows, count, seed):
    """`count` rows of each label (the last field), drawn with `seed` (a number or a string), shuffled."""
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
