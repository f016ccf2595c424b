"""Corpora that need no network: which exist, and one call to build any of them.

`build_corpus(name_or_path, out_dir)` returns the path of a corpus file in Google's format (one sentence
per line, a blank line between documents), ready for the vocabulary trainer and for instance creation:

- `"pydocs"`: English prose from the docstrings of the Python running the build (`pydocs.py`);
- `"pydocs-large"`: pydocs plus the docstrings of sympy, mpmath, scipy, pandas and matplotlib, which it
  installs at pinned versions into its own folder (`pydocs_large.py`; pip needs the package index once);
- `"synthetic"`: bilingual stories from a grammar, with the right-context probe and the fine-tuning
  sets (`synthetic.py`); or a path to your own file, described below.
"""

# A path to your own file: a file already in the format is checked (`check_corpus_file`) and used where
# it is, not copied; `versions.json` in `out_dir` records its sha256. Plain prose, one paragraph per line
# (your notes, or WikiText's `wiki.train.raw`), is converted with `split_sentences=True`: each paragraph
# is split into sentences and written to `out_dir/corpus.txt`. A blank line ends a document, except in
# WikiText, where each ` = Title = ` article is one document.

from pathlib import Path

from minibert.data.corpora.corpus_file import (
    CORPUS_FILE,
    VERSIONS_FILE,
    check_corpus_file,
    iter_documents,
    prose_to_documents,
    write_corpus,
    write_corpus_reference,
)
from minibert.data.corpora.pydocs import build_pydocs
from minibert.data.corpora.pydocs_large import build_pydocs_large
from minibert.data.corpora.sentences import split_sentences
from minibert.data.corpora.synthetic import build_synthetic
from minibert.data.corpora.synthetic_grammar import SYNTHETIC_RIGHT_CONTEXT
from minibert.errors import DataError

# name -> (builder, one-line description)
CORPORA = {
    "pydocs": (build_pydocs, "English docstrings: standard library, numpy, numba, regex, pytest, hypothesis"),
    "pydocs-large": (build_pydocs_large, "pydocs and the docstrings of sympy, mpmath, scipy, pandas, matplotlib"),
    "synthetic": (build_synthetic, "bilingual stories with right-context words, probe, fine-tuning sets"),
}

__all__ = [
    "CORPORA", "CORPUS_FILE", "SYNTHETIC_RIGHT_CONTEXT", "VERSIONS_FILE", "build_corpus", "build_pydocs",
    "build_pydocs_large", "build_synthetic", "check_corpus_file", "iter_documents", "split_sentences",
]


def build_corpus(name_or_path, out_dir, split_sentences=False, progress=print, **options):
    """Build or check a corpus and return the path of its text file.

    name_or_path: a name of CORPORA, or the path of a text file. `options` go to the builder
    (for example `seed=` and `num_documents=` for "synthetic").
    """
    if name_or_path in CORPORA:
        if split_sentences:
            raise DataError(f"split_sentences is for your own files, not for {name_or_path}")
        builder, _ = CORPORA[name_or_path]
        return builder(out_dir, progress=progress, **options)
    path = Path(name_or_path)
    if options:
        raise DataError(f"options {sorted(options)} are for the built-in corpora, not for a file")
    if not path.is_file():
        raise DataError(f"{name_or_path} is neither a corpus name ({', '.join(CORPORA)}) nor a file")
    out_dir = Path(out_dir)
    if split_sentences:
        source = {"source": str(path.resolve())}
        written = write_corpus(out_dir, "file", prose_to_documents(path), source, progress)
        check_corpus_file(written)
        return written
    counts = check_corpus_file(path)
    write_corpus_reference(out_dir, path, counts)
    progress(f"corpus: using {path} ({counts['documents']} documents, {counts['sentences']} sentences)")
    return path
