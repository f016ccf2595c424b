"""Tests for minibert.io.npz (our checkpoint container) and minibert.io.atomic (crash-safe writing).

The fuzz test runs MINIBERT_FUZZ_EXAMPLES cases (default 200); set it to 10000 for a long run.
"""

import io
import json
import os
import tracemalloc
import zipfile

import numpy as np
import pytest
from helpers import byte_mutations  # one mutation strategy for both readers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minibert.io.npz as npz_module
from minibert.errors import CheckpointError
from minibert.io import atomic_write, load_arrays, save_arrays

FUZZ_EXAMPLES = int(os.environ.get("MINIBERT_FUZZ_EXAMPLES", "200"))
fuzz_settings = settings(max_examples=FUZZ_EXAMPLES, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.uint64, np.bool_]
any_array = st.sampled_from(DTYPES).flatmap(
    lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
array_names = st.text(min_size=1, max_size=12).filter(lambda name: name != "__meta__" and "\x00" not in name)
json_leaves = (st.none() | st.booleans() | st.integers(-(2**130), 2**130)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10)
meta_dicts = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@given(arrays=st.dictionaries(array_names, any_array, max_size=5), meta=meta_dicts)
def test_round_trip_is_exact(tmp_path_factory, arrays, meta):
    """Every array comes back bit for bit with its name, dtype and shape (0-d, empty, NaN, -0.0 included),
    and the meta comes back equal: nested dicts, big integers (an RNG state), exact floats, Unicode."""
    path = tmp_path_factory.mktemp("npz") / "checkpoint.npz"
    save_arrays(path, arrays, meta)
    loaded, loaded_meta = load_arrays(path)
    assert sorted(loaded) == sorted(arrays)
    for name, array in arrays.items():
        assert same_bits(loaded[name], array), name
        assert loaded[name].flags.writeable
    assert loaded_meta == meta


def test_numpy_reads_our_files_without_pickle(tmp_path):
    """Our file is a plain .npz: np.load(allow_pickle=False) opens it, meta included as UTF-8 JSON bytes,
    and Fortran-ordered or big-endian arrays come back with the same values."""
    arrays = {"w": np.asfortranarray(np.arange(6.0).reshape(2, 3)), "big_endian": np.arange(3, dtype=">i4")}
    save_arrays(tmp_path / "c.npz", arrays, {"step": 7})
    with np.load(tmp_path / "c.npz", allow_pickle=False) as plain:
        assert np.array_equal(plain["w"], arrays["w"])
        assert json.loads(plain["__meta__"].tobytes()) == {"step": 7}
    loaded, _ = load_arrays(tmp_path / "c.npz")
    assert np.array_equal(loaded["big_endian"], [0, 1, 2]) and loaded["big_endian"].dtype == np.int32


def test_names_numpy_would_misread_are_safe(tmp_path):
    """Array names that are np.savez's own keywords ("file", "allow_pickle") or contain slashes and dots
    (HF parameter names) round-trip: the writer does not pass names as keyword arguments."""
    arrays = {"file": np.ones(2), "allow_pickle": np.zeros(1), "bert.encoder.layer.0/x": np.arange(2)}
    save_arrays(tmp_path / "c.npz", arrays, {})
    loaded, _ = load_arrays(tmp_path / "c.npz")
    assert all(same_bits(loaded[name], array) for name, array in arrays.items())


@pytest.mark.parametrize("name", ["", "__meta__", "a\x00b", 3])
def test_names_that_cannot_round_trip_are_refused(tmp_path, name):
    """An empty name, the meta's own key, a NUL (a zip member name ends there) or a non-string is refused
    on save, naming the problem, instead of writing a checkpoint that would not load."""
    with pytest.raises(CheckpointError, match="names must be"):
        save_arrays(tmp_path / "c.npz", {name: np.ones(2)}, {})
    assert not (tmp_path / "c.npz").exists()


def test_object_arrays_are_refused_on_load(tmp_path):
    """An .npz holding an object array (a pickle in disguise) is refused, saying why, before anything is
    unpickled, even though it is otherwise a valid checkpoint."""
    path = tmp_path / "evil.npz"
    np.savez(path, __meta__=np.frombuffer(b"{}", np.uint8), weights=np.array([{"x": 1}], dtype=object))
    with pytest.raises(CheckpointError, match="'weights'.*object.*pickle"):
        load_arrays(path)


def test_unsafe_or_unsupported_arrays_are_refused_on_save(tmp_path):
    """save_arrays refuses object, string and structured arrays, the reserved name, and meta that is not
    JSON (a NumPy number, NaN, not a dict), each with a CheckpointError naming the problem; no file
    appears."""
    path = tmp_path / "c.npz"
    bad_calls = [
        ({"o": np.array([None], dtype=object)}, {}, "'o'"),
        ({"s": np.array(["text"])}, {}, "'s'"),
        ({"r": np.zeros(2, dtype=[("a", "f4")])}, {}, "'r'"),
        ({"__meta__": np.zeros(2)}, {}, "__meta__"),
        ({}, {"lr": np.float32(1e-4)}, "JSON"),
        ({}, {"loss": float("nan")}, "JSON"),
        ({}, [1, 2], "dict"),
    ]
    for arrays, meta, named in bad_calls:
        with pytest.raises(CheckpointError, match=named):
            save_arrays(path, arrays, meta)
    assert not list(tmp_path.iterdir())


def test_compressed_and_foreign_files_are_refused(tmp_path):
    """np.savez_compressed members, a plain .npz without meta, a .npy file and a text file are refused with
    a CheckpointError that names the file and says what to do."""
    cases = {}
    np.savez_compressed(tmp_path / "compressed.npz", __meta__=np.frombuffer(b"{}", np.uint8), w=np.ones(3))
    cases["compressed.npz"] = "compressed"
    np.savez(tmp_path / "plain.npz", w=np.ones(3))
    cases["plain.npz"] = "np.load"
    np.save(tmp_path / "single.npy", np.ones(3))
    cases["single.npy"] = "cannot read"
    (tmp_path / "notes.txt").write_text("hello")
    cases["notes.txt"] = "cannot read"
    for name, named in cases.items():
        with pytest.raises(CheckpointError, match=named) as raised:
            load_arrays(tmp_path / name)
        assert name in str(raised.value)
    with pytest.raises(CheckpointError, match="no such file"):
        load_arrays(tmp_path / "absent.npz")


def valid_checkpoint_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, array in {"__meta__": np.frombuffer(b'{"step": 3}', np.uint8), "w": np.arange(12.0),
                            "ids": np.arange(4, dtype=np.int32).reshape(2, 2)}.items():
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, array)
    return buffer.getvalue()


def test_truncated_files_are_refused(tmp_path):
    """A checkpoint cut off at any of 60 points (a crash mid-copy) raises CheckpointError naming the file."""
    content = valid_checkpoint_bytes()
    path = tmp_path / "cut.npz"
    for length in np.linspace(0, len(content) - 1, 60).astype(int):
        path.write_bytes(content[:length])
        with pytest.raises(CheckpointError, match="cut.npz"):
            load_arrays(path)


def npz_with_member_header(header_text, data):
    """An .npz whose member 'w' has this .npy header (a Python dict literal) and these data bytes."""
    header = header_text.encode("latin1")
    header += b" " * (-(10 + len(header) + 1) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("__meta__.npy", _npy_bytes(np.frombuffer(b"{}", np.uint8)))
        archive.writestr("w.npy", npy)
    return buffer.getvalue()


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("header, named", [
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", "shape"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 0), }", "shape"),
    ("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "object"),
    ("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", "refuses"),
    ("{'descr': [('a', '|O')], 'fortran_order': False, 'shape': (1,), }", "refuses"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 5000 + ")" * 5000 + ", }", "cannot read"),
    ("__import__('os').system('echo pwned')", "cannot read"),
])
def test_hostile_array_headers_are_refused_without_allocating(tmp_path, header, named):
    """A member header claiming a terabyte, a negative shape, an object or string dtype, deep nesting or
    code is refused with a CheckpointError, and less than 2 MB is allocated on the way."""
    path = tmp_path / "hostile.npz"
    path.write_bytes(npz_with_member_header(header, b"\0" * 16))
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=named):
            load_arrays(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000


def test_a_failed_write_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    """If the disk fills up halfway through a save, the error says so, the previous checkpoint still loads
    unchanged, and no temporary file is left behind."""
    path = tmp_path / "c.npz"
    save_arrays(path, {"w": np.ones(3)}, {"step": 1})
    real_write_array = np.lib.format.write_array
    calls = []

    def write_until_disk_full(file, array, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write_array(file, array, **kwargs)

    monkeypatch.setattr(npz_module.np.lib.format, "write_array", write_until_disk_full)
    with pytest.raises(CheckpointError, match="No space left.*unchanged"):
        save_arrays(path, {"w": np.zeros(3), "v": np.zeros(2)}, {"step": 2})
    monkeypatch.undo()
    arrays, meta = load_arrays(path)
    assert meta == {"step": 1} and arrays["w"].tolist() == [1.0, 1.0, 1.0]
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]


def test_atomic_write_cleans_up_after_any_error(tmp_path):
    """An exception inside `atomic_write` propagates unchanged and leaves neither the target nor a temp file;
    a missing folder is a CheckpointError naming it."""
    with pytest.raises(KeyError), atomic_write(tmp_path / "x.bin") as file:
        file.write(b"partial")
        raise KeyError("boom")
    assert not list(tmp_path.iterdir())
    with pytest.raises(CheckpointError, match="missing"), atomic_write(tmp_path / "missing" / "x.bin"):
        pass


@fuzz_settings
@given(data=st.data())
def test_fuzz_mutated_checkpoints_are_read_or_refused(tmp_path_factory, data):
    """Random byte flips, overwrites, insertions, deletions and truncations of a valid checkpoint either load
    or raise CheckpointError: never another exception, a crash, or an allocation beyond ~2 MB."""
    content = data.draw(byte_mutations([valid_checkpoint_bytes()]))
    path = tmp_path_factory.getbasetemp() / "fuzz.npz"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        load_arrays(path)
        event("loaded")
    except CheckpointError:
        event("refused with CheckpointError")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 2_000_000
