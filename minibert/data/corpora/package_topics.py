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
from minibert.io.atomic import atomic_write

LABELS = {
    "terminal": ("pip._vendor.rich", "pip._vendor.rich.*"),
    "http": ("pip._vendor.urllib3", "pip._vendor.urllib3.*", "pip._vendor.requests", "pip._vendor.requests.*"),
    "packaging": ("pip._internal", "pip._internal.*", "pip._vendor.distlib", "pip._vendor.distlib.*",
                  "pip._vendor.pkg_resources", "pip._vendor.packaging", "pip._vendor.packaging.*"),
}
MIN_WORDS = 5  # shorter sentences ("Returns the value.") say nothing about where they come from


def labelled_documents(exclude=frozenset(), labels=None):
    """{label: [[sentence, ...] per document]}, without sentences in `exclude` or under MIN_WORDS words.
    labels: {label: module patterns}, LABELS when None (dependency_topics.py has another set)."""
    documents = {}
    for label, patterns in (LABELS if labels is None else labels).items():
        modules, _ = import_modules(patterns)
        kept = []
        for _, sentences in module_documents(modules):
            sentences = [s for s in sentences if s not in exclude and len(s.split()) >= MIN_WORDS]
            if sentences:
                kept.append(sentences)
        documents[label] = kept
    return documents


def first_occurrences(documents):
    """`documents` with each sentence kept in its first document only. The libraries repeat sentences
    (rich documents a parameter alike in each function that takes it): a repeat would put a dev sentence in
    training (and, in the pair task, make an `other` pair of two sentences side by side in a third document)."""
    seen, kept = set(), {}
    for library, docs in documents.items():
        kept[library] = []
        for doc in docs:
            new = []
            for sentence in doc:
                key = " ".join(sentence.split())  # as the TSV file will write it
                if key not in seen:
                    seen.add(key)
                    new.append(sentence)
            if new:
                kept[library].append(new)
    return kept


def split_documents(docs, dev_size, rng, size=len):
    """(train documents, dev documents): whole documents in a seeded order, to dev until it holds
    `dev_size` (each document counted by `size`: its sentences, or what a task takes from it), then to train."""
    train, dev, held = [], [], 0
    for index in rng.permutation(len(docs)):  # dev first, so its size is met exactly from whole documents
        if held < dev_size:
            dev.append(docs[index])
            held += size(docs[index])
        else:
            train.append(docs[index])
    return train, dev


def split_examples(documents, train_per_label, dev_per_label, seed):
    """(train, dev): lists of (sentence, label), `*_per_label` of each label, whole documents per side.
    train_per_label None: all the training sentences the smallest label has, for every label (balanced)."""
    rng = np.random.default_rng(seed)
    dev, shuffled = [], {}  # shuffled: each label's training sentences in a seeded order
    for label, docs in first_occurrences(documents).items():
        train_docs, dev_docs = split_documents(docs, dev_per_label, rng)
        train_sentences = [s for doc in train_docs for s in doc]
        dev_sentences = [s for doc in dev_docs for s in doc]
        if len(dev_sentences) < dev_per_label or len(train_sentences) < (train_per_label or 1):
            raise DataError(f"label {label!r} has {len(dev_sentences) + len(train_sentences)} sentences here, "
                            f"fewer than the {train_per_label or 1} + {dev_per_label} asked for; ask for fewer")
        dev += [(s, label) for s in rng.permutation(dev_sentences)[:dev_per_label]]
        shuffled[label] = rng.permutation(train_sentences)
    count = train_per_label or min(len(sentences) for sentences in shuffled.values())
    train = [(s, label) for label, sentences in shuffled.items() for s in sentences[:count]]
    return [train[i] for i in rng.permutation(len(train))], [dev[i] for i in rng.permutation(len(dev))]


def write_tsv(path, examples, header=("sentence", "label")):
    """GLUE's layout (a header, then tab-separated fields), as `finetune --task glue-tsv` reads: one
    (sentence, label) per line, or (sentence1, sentence2, label) with header=("sentence1", "sentence2", "label")."""
    lines = ["\t".join(header)] + ["\t".join(" ".join(field.split()) for field in fields) for fields in examples]
    with atomic_write(path) as file:  # whole or absent: the finetune command reuses files it finds
        file.write("".join(line + "\n" for line in lines).encode("utf-8"))


def build_package_topics(out_dir, train_per_label=300, dev_per_label=200, seed=0, pretraining_corpus=None,
                         labels=None):
    """Write train.tsv and dev.tsv of the task to `out_dir`; returns their paths.

    pretraining_corpus: a corpus file (Google's format), or several, whose sentences must not appear in the
    task. train_per_label None: as many as the smallest label has. labels: as `labelled_documents`."""
    train, dev = split_examples(labelled_documents(corpus_sentences(pretraining_corpus), labels),
                                train_per_label, dev_per_label, seed)
    return write_splits(out_dir, train, dev)


def corpus_sentences(paths):
    """Every sentence of a corpus file, or of a list of them (none for None): what a task made from these
    libraries leaves out."""
    if paths is None:
        return frozenset()
    paths = [paths] if isinstance(paths, (str, Path)) else paths
    return frozenset(s for path in paths for _, document in iter_documents(path) for s in document)


def write_splits(out_dir, train, dev, header=("sentence", "label")):
    """Write `out_dir`/train.tsv and dev.tsv with `write_tsv`; returns their paths."""
    out_dir = Path(out_dir)
    paths = out_dir / "train.tsv", out_dir / "dev.tsv"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_tsv(paths[0], train, header)
    write_tsv(paths[1], dev, header)
    return paths
