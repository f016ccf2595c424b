"""A tokenized corpus on disk, read back through memory maps: every document, without holding them in RAM.

    ids.bin          (T,) int32  the token ids of every sentence, one after the other
    word_starts.bin  (T,) bool   True where a token starts a whole word
    sentence_ends    (N,) int64  sentence n is tokens [sentence_ends[n-1], sentence_ends[n])
    document_ends    (D,) int64  document d is sentences [document_ends[d-1], document_ends[d])

T tokens, N sentences, D documents. Read with `numpy.memmap`, so only the pages in use are in RAM.
"""

# Google's `create_pretraining_data.py` keeps all documents in a Python list, which is why it runs out of memory
# on large corpora (google-research/bert #117, #612). But NotNext needs random access to *any* document, and
# dupe_factor needs several passes. So we tokenize once, streaming, into the flat binary files of the
# docstring, and read them with `numpy.memmap`: the operating system pages in what is used, and Python's heap
# stays the size of one document.

import json
import os
from pathlib import Path

import numpy as np

from minibert.data.instances import Sentence
from minibert.errors import DataError

_ARRAYS = {"ids": np.int32, "word_starts": np.bool_, "sentence_ends": np.int64, "document_ends": np.int64}
_META = "meta.json"


class TokenStoreWriter:
    """Append documents to a new store in `directory`, one document in memory at a time."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        # Buffered binary files: many small writes cost little, and nothing accumulates in Python lists.
        self.files = {name: open(self.directory / f"{name}.bin", "wb") for name in _ARRAYS}
        self.tokens, self.sentences, self.documents = 0, 0, 0

    def add_document(self, sentences):
        """Append one document, a list of `Sentence`s."""
        lengths = np.array([len(sentence.ids) for sentence in sentences], np.int64)
        arrays = {
            "ids": np.concatenate([sentence.ids for sentence in sentences]),
            "word_starts": np.concatenate([sentence.word_starts for sentence in sentences]),
            "sentence_ends": self.tokens + np.cumsum(lengths),
            "document_ends": np.array([self.sentences + len(sentences)]),
        }
        for name, dtype in _ARRAYS.items():
            self.files[name].write(arrays[name].astype(dtype, copy=False).tobytes())
        self.tokens += int(lengths.sum())
        self.sentences += len(sentences)
        self.documents += 1

    def close(self):
        for file in self.files.values():
            file.close()
        meta = {"tokens": self.tokens, "sentences": self.sentences, "documents": self.documents}
        (self.directory / _META).write_text(json.dumps(meta))

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class TokenStore:
    """Read a store: `len(store)` documents, `store[d]` is document d as a list of `Sentence`s."""

    def __init__(self, directory):
        self.directory = Path(directory)
        try:
            self.meta = json.loads((self.directory / _META).read_text())
        except (OSError, ValueError) as error:
            raise DataError(f"{self.directory} is not a complete token store ({error}); rebuild it") from None
        lengths = {"ids": "tokens", "word_starts": "tokens", "sentence_ends": "sentences",
                   "document_ends": "documents"}
        arrays = {}
        for name, dtype in _ARRAYS.items():
            path, count = self.directory / f"{name}.bin", self.meta[lengths[name]]
            if os.path.getsize(path) != count * np.dtype(dtype).itemsize:
                raise DataError(f"{path} has {os.path.getsize(path)} bytes, not the {count} {dtype.__name__} "
                                f"values {_META} announces; rebuild the store")
            # np.memmap cannot map an empty file; an empty store has nothing to map.
            arrays[name] = np.asarray(np.memmap(path, dtype=dtype, mode="r")) if count else np.zeros(0, dtype)
        self.ids, self.word_starts = arrays["ids"], arrays["word_starts"]
        self.sentence_ends, self.document_ends = arrays["sentence_ends"], arrays["document_ends"]

    def __len__(self):
        return len(self.document_ends)

    def __getitem__(self, document_index):
        first = self.document_ends[document_index - 1] if document_index else 0
        ends = self.sentence_ends[first:self.document_ends[document_index]].tolist()
        starts = [self.sentence_ends[first - 1] if first else 0, *ends[:-1]]
        return [Sentence(self.ids[start:end], self.word_starts[start:end])
                for start, end in zip(starts, ends, strict=True)]

    def subset(self, document_indices):
        """The documents at `document_indices`, as their own corpus (NotNext draws stay inside it)."""
        return DocumentSubset(self, np.asarray(document_indices, dtype=np.int64))


class DocumentSubset:
    """Some documents of a corpus, renumbered 0..len-1: a held-out split, or the training split."""

    def __init__(self, documents, indices):
        self.documents, self.indices = documents, indices

    def __len__(self):
        return len(self.indices)

    def __getitem__(self, document_index):
        return self.documents[int(self.indices[document_index])]
