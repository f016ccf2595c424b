"""Streamed .npz shards (minibert/data/shards.py): exact round trips, atomic files, hostile files refused."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibert.data.shards import ShardWriter, manifest_fields, read_manifest, read_shard, write_manifest
from minibert.errors import DataError

FIELDS = {"input_ids": (np.dtype(np.int32), (6,)), "word_starts": (np.dtype(np.bool_), (6,)),
          "masked_lm_weights": (np.dtype(np.float32), (3,)), "next_sentence_labels": (np.dtype(np.int32), ())}


def random_rows(rng, count):
    return {"input_ids": rng.integers(0, 2**31 - 1, (count, 6)).astype(np.int32),
            "word_starts": rng.random((count, 6)) < 0.5,
            "masked_lm_weights": rng.random((count, 3)).astype(np.float32),
            "next_sentence_labels": rng.integers(0, 2, count).astype(np.int32)}


@settings(derandomize=True, max_examples=30)
@given(chunks=st.lists(st.integers(0, 40), min_size=1, max_size=6), rows_per_shard=st.integers(1, 50),
       seed=st.integers(0, 2**32 - 1))
def test_shards_read_back_exactly(tmp_path_factory, chunks, rows_per_shard, seed):
    """Rows written in chunks of any size come back bit for bit, in order; every shard but the last is full;
    no temporary file is left behind."""
    rng = np.random.default_rng(seed)
    directory = tmp_path_factory.mktemp("shards")
    writer = ShardWriter(directory, "train", FIELDS, rows_per_shard)
    written = [random_rows(rng, count) for count in chunks]
    for rows in written:
        writer.write(rows)
    entry = writer.close()
    assert entry["rows"] == sum(chunks)
    assert all(shard["rows"] == rows_per_shard for shard in entry["shards"][:-1])
    read = [read_shard(directory / shard["file"], FIELDS, shard["rows"]) for shard in entry["shards"]]
    for name in FIELDS:
        expected = np.concatenate([rows[name] for rows in written])
        got = np.concatenate([shard[name] for shard in read]) if read else expected[:0]
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == FIELDS[name][0]
    assert not list(directory.glob("*.partial"))


def test_manifest_round_trip_and_missing_manifest(tmp_path):
    """The manifest reads back with its fields; a directory without one says how to build it."""
    fields = {name: {"dtype": dtype.name, "shape": list(shape)} for name, (dtype, shape) in FIELDS.items()}
    write_manifest(tmp_path, {"fields": fields, "splits": {}})
    assert manifest_fields(read_manifest(tmp_path)) == FIELDS
    with pytest.raises(DataError, match="python -m minibert data"):
        read_manifest(tmp_path / "elsewhere")


def save(path, **arrays):
    np.savez(path, **arrays)
    return path


def test_bad_shards_are_refused(tmp_path):
    """Each broken shard raises DataError naming the file: a missing field, a wrong dtype, a wrong row count,
    an object array (which only pickle could load), and a file that is not a zip at all."""
    rows = random_rows(np.random.default_rng(0), 4)
    cases = {
        "missing": ({k: v for k, v in rows.items() if k != "word_starts"}, "holds"),
        "dtype": ({**rows, "input_ids": rows["input_ids"].astype(np.int64)}, "int64"),
        "rows": ({k: v[:3] for k, v in rows.items()}, r"\(3, 6\)"),
        "pickled": ({**rows, "input_ids": np.array([object()] * 4, dtype=object)}, "cannot be read"),
    }
    for name, (arrays, message) in cases.items():
        path = save(tmp_path / f"{name}.npz", **arrays)
        with pytest.raises(DataError, match=message):
            read_shard(path, FIELDS, 4)
    (tmp_path / "garbage.npz").write_bytes(b"not a zip file")
    with pytest.raises(DataError, match="garbage.npz cannot be read"):
        read_shard(tmp_path / "garbage.npz", FIELDS, 4)
