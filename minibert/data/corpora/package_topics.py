"""A real-text classification task no one here wrote: which library a documentation sentence comes from.

Every Python environment made with `venv` has pip, and pip carries its own copies of other projects'
libraries (`pip._vendor`). Their docstrings are English written by those projects' authors, and the label of
each sentence is a plain fact: the library whose code holds it. The `pydocs` pretraining corpus reads the
standard library and the packages of requirements.txt only, so none of these libraries is in it, and any
sentence that still appears in a given pretraining corpus (docstrings copied from the standard library) is
dropped. That makes the task a fair test of what pretraining on pydocs transfers to text it never saw.
"""

# The labels:
#     terminal    rich: consoles, styles, tables, progress bars
#     http        urllib3 and requests: connections, sessions, retries, cookies
#     packaging   pip's own code, distlib, pkg_resources and packaging: installing and describing packages
#
# Sentences are grouped by document (a module or a class, as in pydocs), and whole documents go to train or
# dev, so that no dev sentence has its neighbours in the training set. The split is balanced by label.

from pathlib import Path

import numpy as np

from minibert.data.corpora.corpus_file import iter_documents
from minibert.data.corpora.pydocs import import_modules, module_documents
from minibert.errors import DataError

LABELS = {
    "terminal": ("pip._vendor.rich", "pip._vendor.rich.*"),
    "http": ("pip._vendor.urllib3", "pip._vendor.urllib3.*", "pip._vendor.requests", "pip._vendor.requests.*"),
    "packaging": ("pip._internal", "pip._internal.*", "pip._vendor.distlib", "pip._vendor.distlib.*",
                  "pip._vendor.pkg_resources", "pip._vendor.packaging", "pip._vendor.packaging.*"),
}
MIN_WORDS = 5  # shorter sentences ("Returns the value.") say nothing about where they come from


def labelled_documents(exclude=frozenset()):
    """{label: [[sentence, ...] per document]}, without sentences in `exclude` or under MIN_WORDS words."""
    documents = {}
    for label, patterns in LABELS.items():
        modules, _ = import_modules(patterns)
        kept = []
        for _, sentences in module_documents(modules):
            sentences = [s for s in sentences if s not in exclude and len(s.split()) >= MIN_WORDS]
            if sentences:
                kept.append(sentences)
        documents[label] = kept
    return documents


def split_examples(documents, train_per_label, dev_per_label, seed):
    """(train, dev): lists of (sentence, label), `*_per_label` of each label, whole documents per side."""
    rng = np.random.default_rng(seed)
    train, dev = [], []
    for label, docs in documents.items():
        order = rng.permutation(len(docs))
        dev_sentences, train_sentences = [], []
        for index in order:  # dev first, so its size is met exactly from whole documents where possible
            side = dev_sentences if len(dev_sentences) < dev_per_label else train_sentences
            side.extend(docs[index])
        if len(dev_sentences) < dev_per_label or len(train_sentences) < train_per_label:
            raise DataError(f"label {label!r} has {len(dev_sentences) + len(train_sentences)} sentences here, "
                            f"fewer than the {train_per_label} + {dev_per_label} asked for; ask for fewer")
        dev += [(s, label) for s in rng.permutation(dev_sentences)[:dev_per_label]]
        train += [(s, label) for s in rng.permutation(train_sentences)[:train_per_label]]
    return [train[i] for i in rng.permutation(len(train))], [dev[i] for i in rng.permutation(len(dev))]


def write_tsv(path, examples):
    """GLUE's single-sentence layout (`sentence<TAB>label` with a header), as `finetune --task glue-tsv` reads."""
    with open(path, "w", encoding="utf-8") as file:
        file.write("sentence\tlabel\n")
        for sentence, label in examples:
            file.write(f"{' '.join(sentence.split())}\t{label}\n")


def build_package_topics(out_dir, train_per_label=300, dev_per_label=200, seed=0, pretraining_corpus=None):
    """Write train.tsv and dev.tsv of the task to `out_dir`; returns their paths.

    pretraining_corpus: a corpus file (Google's format) whose sentences must not appear in the task."""
    exclude = frozenset()
    if pretraining_corpus is not None:
        exclude = frozenset(s for _, document in iter_documents(pretraining_corpus) for s in document)
    train, dev = split_examples(labelled_documents(exclude), train_per_label, dev_per_label, seed)
    out_dir = Path(out_dir)
    paths = out_dir / "train.tsv", out_dir / "dev.tsv"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_tsv(paths[0], train)
    write_tsv(paths[1], dev)
    return paths
