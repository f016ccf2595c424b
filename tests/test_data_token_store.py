"""The memory-mapped token store (minibert/data/token_store.py): documents go in, the same come out."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.instances import Sentence
from minibert.data.token_store import TokenStore, TokenStoreWriter
from minibert.errors import DataError


@settings(derandomize=True, max_examples=25)
@given(shapes=st.lists(st.lists(st.integers(1, 30), min_size=1, max_size=8), min_size=1, max_size=12),
       seed=st.integers(0, 2**32 - 1))
def test_documents_read_back_exactly(tmp_path_factory, shapes, seed):
    """Whatever the document shapes, every document reads back with the same sentences, ids and word starts;
    a subset renumbers documents from 0."""
    rng = np.random.default_rng(seed)
    documents = [[Sentence(rng.integers(0, 50_000, n).astype(np.int32), rng.random(n) < 0.7) for n in shape]
                 for shape in shapes]
    directory = tmp_path_factory.mktemp("store")
    with TokenStoreWriter(directory) as writer:
        for document in documents:
            writer.add_document(document)
    store = TokenStore(directory)
    assert len(store) == len(documents)
    for expected, got in zip(documents, [store[d] for d in range(len(store))], strict=True):
        assert len(got) == len(expected)
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a.ids, b.ids)
            np.testing.assert_array_equal(a.word_starts, b.word_starts)
    subset = store.subset([len(documents) - 1, 0])
    np.testing.assert_array_equal(subset[0][0].ids, documents[-1][0].ids)


def test_a_truncated_store_is_refused(tmp_path):
    """A store whose ids file lost bytes raises DataError naming the file, instead of reading garbage."""
    with TokenStoreWriter(tmp_path) as writer:
        writer.add_document([Sentence(np.arange(10, dtype=np.int32), np.ones(10, bool))])
    with open(tmp_path / "ids.bin", "r+b") as file:
        file.truncate(12)
    with pytest.raises(DataError, match="ids.bin has 12 bytes"):
        TokenStore(tmp_path)
