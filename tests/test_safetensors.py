"""Tests for minibert.io.safetensors and minibert.io.bfloat16: exact round trips, compatibility with the
real `safetensors` library, and hostile files.

The fuzz tests run MINIBERT_FUZZ_EXAMPLES cases each (default 200); set it to 10000 for a long run.
"""

import json
import os
import struct
import tracemalloc
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from helpers import byte_mutations
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from minibert.errors import CheckpointError
from minibert.io import (
    bf16_bits_to_float32,
    float32_to_bf16_bits,
    read_safetensors,
    round_to_bf16,
    write_safetensors,
)

FIXTURES = Path(__file__).parent / "fixtures" / "safetensors"
FUZZ_EXAMPLES = int(os.environ.get("MINIBERT_FUZZ_EXAMPLES", "200"))
fuzz_settings = settings(max_examples=FUZZ_EXAMPLES, deadline=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint32,
          np.bool_]
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
any_array = st.sampled_from(DTYPES).flatmap(lambda dtype: hnp.arrays(dtype, small_shapes))
tensor_names = st.text(min_size=1, max_size=12).filter(lambda name: name != "__metadata__")
tensor_dicts = st.dictionaries(tensor_names, any_array, max_size=5)
metadata_dicts = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)


def same_bits(a, b):
    """Equal dtype, shape and bytes: stricter than ==, and NaN == NaN."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------------------------------------------------
# Round trips


@given(tensors=tensor_dicts, metadata=metadata_dicts)
def test_round_trip_is_exact_in_every_dtype(tmp_path_factory, tensors, metadata):
    """Writing then reading gives back every tensor bit for bit (NaNs, -0.0, empty and 0-d shapes included),
    with its name, dtype and the metadata."""
    path = tmp_path_factory.mktemp("st") / "round.safetensors"
    write_safetensors(path, tensors, metadata)
    read, read_metadata = read_safetensors(path)
    assert list(read) == list(tensors)
    for name, array in tensors.items():
        assert same_bits(read[name], array), name
    assert read_metadata == metadata


half_range = st.floats(-65504, 65504, width=32) | st.sampled_from([np.nan, np.inf, -np.inf])


@given(values=hnp.arrays(np.float32, small_shapes, elements=half_range))
def test_float16_conversion_rounds_like_numpy(tmp_path_factory, values):
    """dtype="f16" stores float32 tensors as F16, rounded to nearest as NumPy's astype does (values within
    float16's range; NaN and infinities pass through)."""
    path = tmp_path_factory.mktemp("st") / "half.safetensors"
    write_safetensors(path, {"w": values, "ids": np.arange(3)}, dtype="f16")
    read, _ = read_safetensors(path)
    assert same_bits(read["w"], values.astype(np.float16))
    assert same_bits(read["ids"], np.arange(3))  # integers are never converted


BF16_MAX = (2 - 2**-7) * 2.0**127  # the largest finite bfloat16
bf16_range = st.floats(-BF16_MAX, BF16_MAX, width=32) | st.sampled_from([np.nan, np.inf, -np.inf])


@given(values=hnp.arrays(np.float32, small_shapes, elements=bf16_range))
def test_bf16_round_trip_is_exact(tmp_path_factory, values):
    """dtype="bf16" stores the rounded values; reading gives them back, and writing them again as bf16
    gives the same file, since bfloat16 values survive bfloat16 rounding unchanged."""
    folder = tmp_path_factory.mktemp("st")
    write_safetensors(folder / "a.safetensors", {"w": values}, dtype="bf16")
    read, _ = read_safetensors(folder / "a.safetensors")
    assert read["w"].dtype == np.float32
    assert same_bits(read["w"], round_to_bf16(values))
    write_safetensors(folder / "b.safetensors", read, dtype="bf16")
    assert (folder / "a.safetensors").read_bytes() == (folder / "b.safetensors").read_bytes()


def bf16_value(pattern):
    """The exact value of a bfloat16 bit pattern, as a Fraction; the exponent-255 pattern stands for 2**128,
    the next power of two, so that rounding past the largest bfloat16 can be judged like any other."""
    sign = -1 if pattern & 0x8000 else 1
    exponent, mantissa = (pattern >> 7) & 0xFF, pattern & 0x7F
    if exponent == 0:
        return sign * Fraction(mantissa, 2**7) * Fraction(2) ** -126
    return sign * (1 + Fraction(mantissa, 2**7)) * Fraction(2) ** (exponent - 127)


def reference_bf16_bits(x):
    """Round one float32 to bfloat16 by comparing exact distances: the textbook rule, no bit tricks."""
    x = np.float32(x)
    pattern = struct.unpack("<I", struct.pack("<f", x))[0]
    if np.isnan(x):
        return None
    if np.isinf(x):
        return pattern >> 16
    below = pattern >> 16  # same sign, smaller or equal magnitude
    above = below + 1
    exact = Fraction(float(x))
    distance_below, distance_above = abs(exact - bf16_value(below)), abs(exact - bf16_value(above))
    if distance_below != distance_above:
        return below if distance_below < distance_above else above
    return below if below % 2 == 0 else above  # a tie goes to the even pattern


@given(values=hnp.arrays(np.float32, st.integers(1, 20), elements=st.floats(width=32)))
def test_bf16_rounding_matches_the_textbook_rule(values):
    """float32_to_bf16_bits rounds to the nearest bfloat16, ties to even, overflow to infinity, and keeps
    NaN a NaN of the same sign, as an element-by-element exact-arithmetic reference says."""
    bits = float32_to_bf16_bits(values)
    assert bits.dtype == np.uint16 and bits.shape == values.shape
    for value, got in zip(values, bits, strict=True):
        expected = reference_bf16_bits(value)
        if expected is None:
            assert np.isnan(bf16_bits_to_float32(got)) and (got >> 15) == np.signbit(value)
        else:
            assert got == expected, (value, hex(got), hex(expected))


def test_bf16_ties_go_to_even():
    """Exactly halfway between two bfloat16 values (low half 0x8000), the even pattern wins: 1 + 2**-8
    rounds down to 1, 1 + 3 * 2**-8 rounds up to 1 + 2**-6; just above halfway always rounds up."""
    values = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 1 + 2**-8 + 2**-20], dtype=np.float32)
    assert round_to_bf16(values).tolist() == [1.0, 1 + 2**-6, -1.0, 1 + 2**-7]
    high_halves = np.arange(0x3F00, 0x4100, dtype=np.uint32)
    ties = ((high_halves << 16) | 0x8000).view(np.float32)
    expected = np.where(high_halves % 2 == 0, high_halves, high_halves + 1)
    assert np.array_equal(float32_to_bf16_bits(ties), expected)


def test_bf16_widening_is_a_shift():
    """A bfloat16 pattern is the high half of a float32: 0x3F80 is 1.0, 0xC040 is -3.0, 0x7F80 is inf."""
    widened = bf16_bits_to_float32(np.array([0x3F80, 0xC040, 0x7F80, 0x0000, 0x8000], dtype=np.uint16))
    assert widened.tolist() == [1.0, -3.0, np.inf, 0.0, 0.0]
    assert np.signbit(widened[4])


def test_write_refuses_what_safetensors_cannot_hold(tmp_path):
    """Strings, objects, complex numbers, a bad dtype= choice and a non-string metadata value are refused
    with a CheckpointError that names the tensor or the option; nothing is written."""
    path = tmp_path / "w.safetensors"
    bad_calls = [
        ({"names": np.array(["a", "b"])}, None, None, "'names'"),
        ({"objects": np.array([{}], dtype=object)}, None, None, "'objects'"),
        ({"complex": np.ones(2, dtype=np.complex64)}, None, None, "'complex'"),
        ({"w": np.ones(2)}, None, "int8", "dtype='int8'"),
        ({"w": np.ones(2)}, {"step": 3}, None, "metadata"),
        ({"__metadata__": np.ones(2)}, None, None, "'__metadata__'"),
    ]
    for tensors, metadata, dtype, named in bad_calls:
        with pytest.raises(CheckpointError, match=named):
            write_safetensors(path, tensors, metadata, dtype=dtype)
    assert not list(tmp_path.iterdir())


def test_narrowing_refuses_overflow(tmp_path):
    """A finite value that would become infinite (70000 in float16, 1e39 from float64 to bf16) is an
    error naming the tensor, not a silent inf in the saved weights."""
    with pytest.raises(CheckpointError, match="'big'.*F16"):
        write_safetensors(tmp_path / "a.safetensors", {"big": np.float32([1.0, 70000.0])}, dtype="f16")
    with pytest.raises(CheckpointError, match="'big'.*BF16"):
        write_safetensors(tmp_path / "a.safetensors", {"big": np.float64([1e39])}, dtype="bf16")
    write_safetensors(tmp_path / "a.safetensors", {"inf": np.float32([np.inf, 1.0])}, dtype="f16")


def test_write_is_atomic_and_aligned(tmp_path):
    """The file replaces an older one whole, leaves no temporary file, and pads the header so that every
    tensor's data starts at a multiple of 8 bytes (float64 can be memory-mapped in place)."""
    path = tmp_path / "w.safetensors"
    path.write_bytes(b"old")
    write_safetensors(path, {"a": np.ones(3, dtype=np.float16), "b": np.arange(2.0)})
    assert [p.name for p in tmp_path.iterdir()] == ["w.safetensors"]
    header_length = int.from_bytes(path.read_bytes()[:8], "little")
    header = json.loads(path.read_bytes()[8: 8 + header_length])
    assert (8 + header_length) % 8 == 0
    assert header["b"]["data_offsets"] == [6, 22] and header["b"]["dtype"] == "F64"


# ---------------------------------------------------------------------------------------------------------
# Compatibility with the real library


def test_reads_a_file_written_by_the_real_library():
    """reference.safetensors, written by safetensors.torch (make.py beside it), reads back as the values
    torch held: every dtype including BF16, a 0-d scalar, an empty tensor, a non-ASCII name, metadata."""
    tensors, metadata = read_safetensors(FIXTURES / "reference.safetensors")
    with np.load(FIXTURES / "expected.npz", allow_pickle=False) as expected_file:
        names = expected_file["names"].tolist()
        expected = {name: expected_file[f"tensor{index}"] for index, name in enumerate(names)}
    assert metadata == {"format": "pt", "note": "made by make.py"}
    assert sorted(tensors) == sorted(expected)
    for name, array in expected.items():
        assert same_bits(tensors[name], array), name


def test_the_real_library_reads_our_files(tmp_path):
    """Optional: files we write load in the real `safetensors` library with the same values (BF16 through
    torch, which NumPy cannot represent)."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    tensors = {"f64": np.linspace(-1, 1, 6).reshape(2, 3), "f32": np.float32([1.5, np.nan]),
               "f16": np.float16([0.1, -2]), "i64": np.arange(4), "i32": np.int32([7]),
               "flag": np.array([True, False]), "scalar": np.float32(2.0), "empty": np.zeros((0, 2))}
    write_safetensors(tmp_path / "ours.safetensors", tensors, {"format": "np"})
    loaded = safetensors_numpy.load_file(tmp_path / "ours.safetensors")
    for name, array in tensors.items():
        assert same_bits(loaded[name], np.asarray(array)), name
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    values = np.float32([1 + 2**-8, 3.14159, -1e-3])
    write_safetensors(tmp_path / "bf16.safetensors", {"w": values}, dtype="bf16")
    loaded = load_file(tmp_path / "bf16.safetensors")["w"]
    assert loaded.dtype == torch.bfloat16
    assert same_bits(loaded.float().numpy(), round_to_bf16(values))
    assert same_bits(loaded.float().numpy(), torch.from_numpy(values).bfloat16().float().numpy())


# ---------------------------------------------------------------------------------------------------------
# Hostile files: each is refused with a CheckpointError that names the file, before any large allocation


def build_file(header, data=b"", header_bytes=None):
    """The bytes of a safetensors file with this header (a dict, or raw bytes) and data part."""
    raw = header_bytes if header_bytes is not None else json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


HOSTILE_FILES = {
    "empty file": (b"", "too short"),
    "header length past the end": ((1000).to_bytes(8, "little") + b"{}", "truncated"),
    "header length of a terabyte": ((2**40).to_bytes(8, "little") + b"{}", "limit"),
    "header of 2**64 - 1 bytes": (b"\xff" * 8 + b"{}", "limit"),
    "non-UTF-8 header": (build_file(None, header_bytes=b'{"\xff\xfe": 1}'), "UTF-8"),
    "not JSON": (build_file(None, header_bytes=b"{not json"), "not valid JSON"),
    "JSON list": (build_file([1, 2]), "JSON object"),
    "deeply nested JSON": (build_file(None, header_bytes=b"[" * 100_000 + b"]" * 100_000), "nested"),
    "deeply nested inside an entry": (build_file(None, header_bytes=b'{"a":' + b'{"b":' * 50_000 + b"1"
                                                 + b"}" * 50_001), "nested"),
    "NaN literal": (build_file(None, header_bytes=b'{"a": {"dtype": "F32", "shape": [NaN]}}'), "NaN"),
    "Infinity literal": (build_file(None, header_bytes=b'{"a": Infinity}'), "Infinity"),
    "duplicate name": (build_file(None, header_bytes=b'{"a": {}, "a": {}}'), "twice"),
    "entry not an object": (build_file({"a": [1, 2]}), "needs a JSON object"),
    "missing data_offsets": (build_file({"a": {"dtype": "F32", "shape": [1]}}, b"\0" * 4), "data_offsets"),
    "unknown dtype": (build_file({"a": entry("F8_E4M3", [2], 0, 2)}, b"\0\0"), "F8_E4M3"),
    "complex dtype": (build_file({"a": entry("C64", [1], 0, 8)}, b"\0" * 8), "C64"),
    "negative shape": (build_file({"a": entry("F32", [-1], 0, 4)}, b"\0" * 4), "shape"),
    "shape of booleans": (build_file({"a": entry("U8", [True], 0, 1)}, b"\0"), "shape"),
    "shape of floats": (build_file({"a": entry("U8", [1.0], 0, 1)}, b"\0"), "shape"),
    "shape not a list": (build_file({"a": entry("U8", 1, 0, 1)}, b"\0"), "shape"),
    "40 dimensions": (build_file({"a": entry("U8", [1] * 40, 0, 1)}, b"\0"), "shape"),
    "negative offset": (build_file({"a": entry("U8", [4], -4, 0)}, b"\0" * 4), "data_offsets"),
    "offsets reversed": (build_file({"a": entry("U8", [0], 4, 0)}, b"\0" * 4), "data_offsets"),
    "three offsets": (build_file({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1, 2]}}, b"\0"),
                      "data_offsets"),
    "offset past the end": (build_file({"a": entry("U8", [8], 0, 8)}, b"\0" * 4), "truncated"),
    "terabyte tensor": (build_file({"a": entry("F32", [2**38], 0, 2**40)}, b"\0" * 16), "truncated"),
    "shape bigger than offsets": (build_file({"a": entry("F32", [1000], 0, 4)}, b"\0" * 4), "4000 bytes"),
    "overlapping tensors": (build_file({"a": entry("U8", [4], 0, 4), "b": entry("U8", [4], 2, 6)},
                                       b"\0" * 6), "overlaps"),
    "two names, one memory": (build_file({"a": entry("U8", [4], 0, 4), "b": entry("U8", [4], 0, 4)},
                                         b"\0" * 4), "overlaps"),
    "gap between tensors": (build_file({"a": entry("U8", [2], 0, 2), "b": entry("U8", [2], 3, 5)},
                                       b"\0" * 5), "gap"),
    "bytes after the last tensor": (build_file({"a": entry("U8", [2], 0, 2)}, b"\0" * 3), "belong to no"),
    "metadata not strings": (build_file({"__metadata__": {"step": 3}}), "__metadata__"),
    "BOOL byte 2": (build_file({"a": entry("BOOL", [2], 0, 2)}, b"\x01\x02"), "0 or 1"),
    "a pickle renamed": (b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.", "pickle"),
    "a torch zip renamed": (b"PK\x03\x04" + b"\0" * 100, "pickle"),
}


@pytest.mark.parametrize("case", list(HOSTILE_FILES))
def test_hostile_file_is_refused_with_a_clear_error(tmp_path, case):
    """Each malformed or hostile file raises CheckpointError naming the file and the problem, and allocates
    less than 2 MB on the way even when the header claims a terabyte (tracemalloc sees NumPy's buffers)."""
    content, named = HOSTILE_FILES[case]
    path = tmp_path / "hostile.safetensors"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError, match=named) as raised:
            read_safetensors(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(path) in str(raised.value)
    assert peak < 2_000_000 + 3 * len(content)


def test_header_limit_is_a_parameter(tmp_path):
    """A header over `max_header_bytes` is refused before it is read; the default is 100 MB."""
    path = tmp_path / "big_header.safetensors"
    write_safetensors(path, {"a": np.zeros(3)})
    read_safetensors(path, max_header_bytes=200)
    with pytest.raises(CheckpointError, match="50-byte limit"):
        read_safetensors(path, max_header_bytes=50)


def test_missing_file_says_so(tmp_path):
    """A path that does not exist gives a CheckpointError, not a bare FileNotFoundError."""
    with pytest.raises(CheckpointError, match="no such file"):
        read_safetensors(tmp_path / "absent.safetensors")


def test_arrays_own_their_memory(tmp_path):
    """The arrays returned do not depend on the file: it can be overwritten and the arrays stay the same."""
    path = tmp_path / "own.safetensors"
    write_safetensors(path, {"a": np.arange(5.0)})
    tensors, _ = read_safetensors(path)
    write_safetensors(path, {"a": np.zeros(5)})
    assert tensors["a"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    tensors["a"][0] = 7.0  # writable


# ---------------------------------------------------------------------------------------------------------
# Fuzzing: mutations of valid files are read or refused, never anything else


def valid_files():
    """A few valid files to mutate: several dtypes, metadata, a 0-d and an empty tensor."""
    rng = np.random.default_rng(0)
    tensors = {"w": rng.standard_normal((3, 4)).astype(np.float32), "ids": np.arange(5),
               "half": np.float16([1, -2, 3]), "flag": np.array([True, False]), "s": np.float64(2.5),
               "none": np.zeros((0, 2), np.int32)}
    return [({"w": tensors["w"]}, None, None), (tensors, {"format": "pt"}, None),
            ({"w": tensors["w"], "b": np.ones(3)}, None, "bf16")]


@pytest.fixture(scope="module")
def valid_file_bytes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("valid")
    contents = []
    for index, (tensors, metadata, dtype) in enumerate(valid_files()):
        write_safetensors(folder / f"{index}.safetensors", tensors, metadata, dtype=dtype)
        contents.append((folder / f"{index}.safetensors").read_bytes())
    return contents


def header_end(content):
    return 8 + int.from_bytes(content[:8].ljust(8, b"\0"), "little")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)


@st.composite
def header_mutations(draw, contents):
    """A valid file whose header had one field replaced by arbitrary JSON (re-encoded, data kept)."""
    content = draw(st.sampled_from(contents))
    header = json.loads(content[8: header_end(content)])
    name = draw(st.sampled_from(sorted(header)))
    if isinstance(header[name], dict) and draw(st.booleans()):
        field = draw(st.sampled_from(sorted(header[name]) + ["extra"]))
        header[name][field] = draw(json_values)
    else:
        header[draw(st.sampled_from([name, "new"]))] = draw(json_values)
    return build_file(header, content[header_end(content):])


def check_read_or_refused(tmp_path_factory, content):
    """Read `content` as a file: it must load or raise CheckpointError, allocating at most ~2 MB."""
    path = tmp_path_factory.getbasetemp() / "fuzz.safetensors"
    path.write_bytes(content)
    tracemalloc.start()
    try:
        read_safetensors(path)
        event("read")
    except CheckpointError:
        event("refused with CheckpointError")
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 2_000_000 + 3 * len(content)


@fuzz_settings
@given(data=st.data())
def test_fuzz_byte_mutations_are_read_or_refused(tmp_path_factory, valid_file_bytes, data):
    """Random byte flips, overwrites, insertions, deletions and truncations of valid files either read or
    raise CheckpointError: never another exception, a crash, or a large allocation."""
    check_read_or_refused(tmp_path_factory, data.draw(byte_mutations(valid_file_bytes, focus=header_end)))


@fuzz_settings
@given(data=st.data())
def test_fuzz_header_fields_are_read_or_refused(tmp_path_factory, valid_file_bytes, data):
    """Replacing any header field (dtype, shape, offsets, metadata, a whole entry) with arbitrary JSON
    (huge integers, floats, NaN, nested lists) reads or raises CheckpointError, nothing else."""
    check_read_or_refused(tmp_path_factory, data.draw(header_mutations(valid_file_bytes)))
