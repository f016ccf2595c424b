"""Google's pretraining corpus format: write it, read it back, check a user's file, convert plain prose.

The format (google-research/bert, README "Pre-training with BERT" and `create_pretraining_data.py`):
one sentence per line, and a blank line between documents. Sentences are kept in order because
next-sentence prediction takes B from the lines right after A; documents are kept apart because a
NotNext B must come from a *different* document.
"""

# Every corpus we build is written by `write_corpus`, which also writes `versions.json` beside it: how many
# documents, sentences and bytes it holds, its sha256, and the Python and package versions it was built
# with, so that a rebuilt corpus can be compared with the one a model was trained on.

import hashlib
import sys
import warnings
from importlib import metadata
from pathlib import Path

import regex

from minibert.data.corpora.sentences import split_sentences
from minibert.errors import DataError
from minibert.io.atomic import atomic_write
from minibert.surrogates import record_json

CORPUS_FILE = "corpus.txt"
VERSIONS_FILE = "versions.json"


def package_versions(names):
    """{name: version} for the installed distributions among `names` ("not installed" for the rest)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def write_corpus(out_dir, name, documents, details=None, progress=print):
    """Write `documents` (an iterable of lists of sentences) as `out_dir/corpus.txt`, and its versions.json.

    Empty documents are skipped. The file is written under a temporary name of its own and renamed at the
    end (`atomic_write`), so an interrupted build never leaves a half corpus that looks complete, and two
    processes writing the same corpus at once never write into one file. Returns the corpus path.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / CORPUS_FILE
    digest = hashlib.sha256()
    counts = {"documents": 0, "sentences": 0, "bytes": 0}
    with atomic_write(path) as file:
        for document in documents:
            if not document:
                continue
            for sentence in document:
                if not sentence.strip() or "\n" in sentence:
                    raise ValueError(f"sentence {sentence!r} is empty or spans lines; a line is one sentence")
            text = ("\n" if counts["documents"] else "") + "\n".join(document) + "\n"
            data = text.encode("utf-8")
            file.write(data)
            digest.update(data)
            counts["documents"] += 1
            counts["sentences"] += len(document)
            counts["bytes"] += len(data)
    versions = {
        "corpus": name,
        "python": sys.version.split()[0],
        **counts,
        "sha256": digest.hexdigest(),
        **(details or {}),
    }
    _write_versions(out_dir, versions)
    progress(f"{name}: wrote {path} ({counts['bytes'] / 1e6:.2f} MB, {counts['documents']} documents, "
             f"{counts['sentences']} sentences)")
    return path


def _write_versions(out_dir, versions):
    text = record_json(versions, indent=2, sort_keys=True) + "\n"
    with atomic_write(Path(out_dir) / VERSIONS_FILE) as file:
        file.write(text.encode("utf-8"))


def _file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_corpus_reference(out_dir, path, counts):
    """Record in out_dir/versions.json which file a user's corpus is, and its sha256, without copying it."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    _write_versions(out_dir, {"corpus": "file", "source": str(Path(path).resolve()),
                              "python": sys.version.split()[0], "bytes": Path(path).stat().st_size,
                              "sha256": _file_sha256(path), **counts})


def iter_documents(path):
    """Yield `(line_number, sentences)` for each document of a corpus file, streaming (1-based line numbers).

    Raises DataError naming the file and line if the file is not UTF-8.
    """
    path = Path(path)
    document, first_line = [], 0
    with open(path, "rb") as file:
        for line_number, raw in enumerate(file, start=1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as error:
                message = f"{path}:{line_number}: not UTF-8 ({error.reason}); re-save it as UTF-8"
                raise DataError(message) from None
            if line:
                if not document:
                    first_line = line_number
                document.append(line)
            elif document:
                yield first_line, document
                document = []
    if document:
        yield first_line, document


def check_corpus_file(path, warn_limit=5):
    """Check a user's corpus file and return its counts; raise DataError if it cannot train BERT.

    Errors: a missing or empty file, or one with no blank line between documents (NotNext needs another
    document). Warnings (file:line): documents of a single sentence, which can never give an IsNext pair.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"corpus file {path} does not exist; give a text file with one sentence per line "
                        "and a blank line between documents")
    counts = {"documents": 0, "sentences": 0, "single_sentence_documents": 0}
    for line_number, sentences in iter_documents(path):
        counts["documents"] += 1
        counts["sentences"] += len(sentences)
        if len(sentences) == 1:
            counts["single_sentence_documents"] += 1
            if counts["single_sentence_documents"] <= warn_limit:
                warnings.warn(f"{path}:{line_number}: a document of one sentence cannot give an IsNext pair; "
                              "join it to its neighbour or add sentences", stacklevel=2)
    if counts["sentences"] == 0:
        raise DataError(f"corpus file {path} is empty; it needs sentences, one per line")
    if counts["documents"] == 1:
        raise DataError(f"corpus file {path} has no document breaks (no blank line); NotNext pairs need a "
                        "second document: put a blank line between documents, or convert plain prose with "
                        "split_sentences=True")
    return counts


_WIKITEXT_TITLE = regex.compile(r"^=\s[^=].*\s=$")  # " = Title = " starts an article
_WIKITEXT_SUBHEADING = regex.compile(r"^(=\s)+.*(\s=)+$")


def prose_to_documents(path):
    """Read plain prose (a paragraph per line) and yield documents of sentences, for `write_corpus`.

    A WikiText file (raw or tokenized) is recognised by its ` = Title = ` lines: each article becomes one
    document and its ` = = Section = = ` headings are dropped. Any other file splits documents at blank lines.
    Each paragraph is split into sentences with `split_sentences`.
    """
    with open(path, encoding="utf-8") as file:
        has_titles = any(_WIKITEXT_TITLE.match(line.strip()) for line in file)
    document = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.strip()
            ends_document = _WIKITEXT_TITLE.match(line) if has_titles else not line
            if ends_document:
                if document:
                    yield document
                document = []
            elif line and not _WIKITEXT_SUBHEADING.match(line):
                document.extend(split_sentences(line))
    if document:
        yield document
