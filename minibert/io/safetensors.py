"""The safetensors format, read and written with NumPy alone.

Reading is where the danger is: the file may come from a stranger, and every number in it is a claim.
So nothing is allocated until the whole header has been checked against the real file size. A header that
claims a terabyte tensor in a 1 kB file is refused before a single array exists, and the arrays that are
allocated together add up to exactly the bytes present in the file.
"""

# safetensors is how HuggingFace ships weights without pickle. A file is three parts:
#
#     [8 bytes]  N, the length of the header: an unsigned 64-bit integer, little-endian
#     [N bytes]  the header, UTF-8 JSON:
#                {"__metadata__": {"format": "pt"},                       (optional, strings only)
#                 "bert.pooler.dense.bias": {"dtype": "F32", "shape": [768], "data_offsets": [0, 3072]},
#                 ...}
#     [rest]     the data: every tensor's bytes, little-endian and row-major, back to back with no gaps.
#                `data_offsets` = [begin, end) counts bytes from the start of this part.

import json
import math
import os
from contextlib import contextmanager

import numpy as np

from minibert.errors import CheckpointError, short_repr
from minibert.io.atomic import atomic_write
from minibert.io.bfloat16 import bf16_bits_to_float32, float32_to_bf16_bits
from minibert.io.hf_names import looks_like_pickle, refuse_pickle_checkpoint
from minibert.io.strict_json import parse_json_object

# A real header is about 100 bytes per tensor: BERT-base's is 20 kB. 100 MB is far beyond any real model
# and still small enough to read into memory.
MAX_HEADER_BYTES = 100 * 1024 * 1024
# NumPy cannot make arrays with more dimensions than this (NumPy 1.x; NumPy 2 allows 64).
MAX_DIMENSIONS = 32

# safetensors dtype name -> the dtype of its bytes in the file. BF16 is kept as raw uint16 bit patterns and
# BOOL as bytes; reading turns them into float32 and bool.
FILE_DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("u1"),
}
# The dtype names `write_safetensors(dtype=...)` accepts for floating-point tensors.
FLOAT_CHOICES = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16"}

_CORRUPT = "the file is damaged or is not a safetensors file: download or save it again"


def read_safetensors(path, max_header_bytes=MAX_HEADER_BYTES):
    """Read a .safetensors file; return `(tensors, metadata)`.

    `tensors` maps each name to a NumPy array that owns its memory (the file can be replaced afterwards);
    BF16 tensors come back as float32 holding exactly the bfloat16 values. `metadata` is the header's
    `__metadata__` dict of strings, or `{}`. Any problem raises `CheckpointError` naming the file.
    """
    with _checked_file(path, max_header_bytes) as (file, entries, metadata, data_start):
        tensors = {name: _read_tensor(file, path, name, entry, data_start) for name, entry in entries}
    return tensors, metadata


def tensor_names(path, max_header_bytes=MAX_HEADER_BYTES):
    """The names of the tensors in a .safetensors file, from its checked header alone: no tensor is read."""
    with _checked_file(path, max_header_bytes) as (_, entries, _, _):
        return [name for name, _ in entries]


@contextmanager
def _checked_file(path, max_header_bytes):
    """The open file and its checked header, `(file, entries, metadata, data_start)`; a problem with either,
    while the file is open, raises `CheckpointError` naming the file."""
    try:
        with open(path, "rb") as file:
            file_size = os.fstat(file.fileno()).st_size
            try:
                header = _read_header(file, path, file_size, max_header_bytes)
            except CheckpointError:
                # A rejected file that starts like a pickle most likely is one (a renamed .bin): say so.
                file.seek(0)
                if looks_like_pickle(file.read(8)):
                    refuse_pickle_checkpoint(path)
                raise
            yield file, *header
    except FileNotFoundError as error:
        raise CheckpointError(f"{path}: no such file; check the path (a HuggingFace model folder holds "
                              "model.safetensors next to config.json)") from error
    except OSError as error:
        raise CheckpointError(f"{path}: cannot read the file: {error.strerror or error}") from error


def _read_header(file, path, file_size, max_header_bytes):
    """Read and check the header. Return `([(name, entry), ...], metadata, data_start)`."""
    if file_size < 8:
        raise CheckpointError(f"{path}: {file_size} bytes is too short for a safetensors file (the header "
                              f"length alone takes 8); {_CORRUPT}")
    header_length = int.from_bytes(file.read(8), "little")
    if header_length > max_header_bytes:
        raise CheckpointError(f"{path}: the header claims {header_length} bytes, more than the "
                              f"{max_header_bytes}-byte limit; {_CORRUPT}")
    if 8 + header_length > file_size:
        raise CheckpointError(f"{path}: the header claims {header_length} bytes but the file has only "
                              f"{file_size - 8} after the length; the file is truncated: {_CORRUPT}")
    raw_header = file.read(header_length)
    try:
        text = raw_header.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CheckpointError(f"{path}: the header is not UTF-8 text (bad byte at {8 + error.start}); "
                              f"{_CORRUPT}") from error
    header = parse_json_object(text, path)
    metadata = _check_metadata(path, header.pop("__metadata__", {}))
    data_size = file_size - 8 - header_length
    entries = [(name, _check_entry(path, name, entry, data_size)) for name, entry in header.items()]
    _check_coverage(path, entries, data_size)
    return entries, metadata, 8 + header_length


def _check_metadata(path, metadata):
    """`__metadata__` is a map of strings to strings in the format's specification."""
    if not isinstance(metadata, dict) or not all(isinstance(value, str) for value in metadata.values()):
        raise CheckpointError(f"{path}: `__metadata__` must map strings to strings; {_CORRUPT}")
    return metadata


def _check_entry(path, name, entry, data_size):
    """Check one tensor's entry against the format and the data size; return (dtype, shape, begin, end)."""
    where = f"{path}: tensor {short_repr(name)}"
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise CheckpointError(f"{where} needs a JSON object with dtype, shape and data_offsets; {_CORRUPT}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in FILE_DTYPES:
        raise CheckpointError(
            f"{where} has dtype {short_repr(dtype)}, which minibert does not read (it reads "
            f"{', '.join(FILE_DTYPES)}); convert the file, e.g. save the model again in float32")
    if (not isinstance(shape, list) or len(shape) > MAX_DIMENSIONS
            or not all(_is_count(size) for size in shape)):
        raise CheckpointError(f"{where} has shape {short_repr(shape)}; a shape is a list of at most "
                              f"{MAX_DIMENSIONS} non-negative integers; {_CORRUPT}")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(offset) for offset in offsets):
        raise CheckpointError(f"{where} has data_offsets {short_repr(offsets)}; they must be two "
                              f"non-negative integers [begin, end]; {_CORRUPT}")
    begin, end = offsets
    if not begin <= end <= data_size:
        raise CheckpointError(f"{where} has data_offsets [{begin}, {end}] but the data part holds "
                              f"{data_size} bytes; the file is truncated or damaged: {_CORRUPT}")
    expected = math.prod(shape) * FILE_DTYPES[dtype].itemsize  # Python ints: a hostile shape cannot overflow
    if end - begin != expected:
        raise CheckpointError(f"{where} has shape {shape} of {dtype}, which takes {expected} bytes, but its "
                              f"data_offsets span {end - begin}; {_CORRUPT}")
    return dtype, shape, begin, end


def _is_count(value):
    return type(value) is int and value >= 0  # `type(...) is int` because JSON `true` is not a size


def _check_coverage(path, entries, data_size):
    """The tensors must tile the data part exactly: no overlap (two names, one memory) and no gap."""
    covered = 0
    for name, (_, _, begin, end) in sorted(entries, key=lambda item: item[1][2:]):
        if begin != covered:
            problem = "overlaps the tensor before it" if begin < covered else f"leaves a gap at {covered}"
            raise CheckpointError(f"{path}: tensor {short_repr(name)} at data_offsets [{begin}, {end}] "
                                  f"{problem}; {_CORRUPT}")
        covered = end
    if covered != data_size:
        raise CheckpointError(f"{path}: {data_size - covered} bytes at the end of the file belong to no "
                              f"tensor; {_CORRUPT}")


def _read_tensor(file, path, name, entry, data_start):
    """Read one tensor's bytes into a fresh array; its size was checked against the file already."""
    dtype, shape, begin, end = entry
    raw = np.empty(math.prod(shape), dtype=FILE_DTYPES[dtype])
    file.seek(data_start + begin)
    if file.readinto(memoryview(raw).cast("B")) != end - begin:
        raise CheckpointError(f"{path}: the file ended inside tensor {short_repr(name)}; it was truncated "
                              "or changed while being read; read it again or download it again")
    if dtype == "BF16":
        array = bf16_bits_to_float32(raw)
    elif dtype == "BOOL":
        if raw.size and raw.max() > 1:
            raise CheckpointError(f"{path}: BOOL tensor {short_repr(name)} holds a byte other than 0 or 1; "
                                  f"{_CORRUPT}")
        array = raw.view(np.bool_)
    else:
        array = raw.astype(raw.dtype.newbyteorder("="), copy=False)  # big-endian machines swap the bytes
    return array.reshape(shape)


def write_safetensors(path, tensors, metadata=None, dtype=None):
    """Write `tensors` (name -> array) as a .safetensors file, atomically.

    `metadata`: an optional dict of strings to strings, stored as `__metadata__`.
    `dtype`: None keeps each array's own dtype; "f32", "f16", "bf16" or "f64" converts every floating-point
    tensor to it (rounding to nearest, ties to even). Integer and bool tensors are never converted.
    """
    if dtype is not None and str(dtype).lower() not in FLOAT_CHOICES:
        raise CheckpointError(f"cannot write {path} with dtype={dtype!r}: choose None (keep each array's "
                              f"dtype) or one of {', '.join(FLOAT_CHOICES)}")
    header = {}
    if metadata:
        if not isinstance(metadata, dict) or not all(
                isinstance(key, str) and isinstance(value, str) for key, value in metadata.items()):
            raise CheckpointError(f"metadata for {path} must be a dict of strings to strings, got "
                                  f"{short_repr(metadata)}; convert the values with str()")
        header["__metadata__"] = dict(metadata)
    encoded = []
    offset = 0
    for name, value in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise CheckpointError(f"cannot write tensor name {short_repr(name)} to {path}: names must be "
                                  "non-empty strings other than '__metadata__'")
        array = np.asarray(value)
        dtype_name, data = _encode(path, name, array, dtype)
        header[name] = {"dtype": dtype_name, "shape": list(array.shape),
                        "data_offsets": [offset, offset + data.nbytes]}
        encoded.append(data)
        offset += data.nbytes
    header_bytes = _dump_header(header)
    with atomic_write(path) as file:
        file.write(len(header_bytes).to_bytes(8, "little"))
        file.write(header_bytes)
        for data in encoded:
            file.write(memoryview(data).cast("B"))


def _dump_header(header):
    """JSON, padded with spaces to a multiple of 8 bytes so each tensor's data starts 8-byte aligned."""
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return text + b" " * (-(8 + len(text)) % 8)


def _encode(path, name, array, dtype):
    """Return (safetensors dtype name, a contiguous little-endian array of the bytes to write)."""
    if array.dtype.kind == "f":
        own = {8: "f64", 4: "f32", 2: "f16"}.get(array.dtype.itemsize)
        if dtype is None and own is None:
            raise CheckpointError(f"cannot write {short_repr(name)} ({array.dtype}) to {path}: safetensors "
                                  "has no such float; pass dtype='f64' or convert with .astype(np.float64)")
        dtype_name = FLOAT_CHOICES[(dtype or own).lower()]
        return dtype_name, _narrow_floats(path, name, array, dtype_name)
    elif array.dtype.kind == "b":
        return "BOOL", np.ascontiguousarray(array, dtype=np.uint8).reshape(-1)
    elif array.dtype.kind in "iu":
        dtype_name = f"{'I' if array.dtype.kind == 'i' else 'U'}{8 * array.dtype.itemsize}"
    else:
        raise CheckpointError(f"cannot write {short_repr(name)} ({array.dtype}) to {path}: safetensors holds "
                              "numbers and bools only; convert it with .astype(np.float32) or np.int64")
    return dtype_name, np.ascontiguousarray(array, dtype=FILE_DTYPES[dtype_name]).reshape(-1)


def _narrow_floats(path, name, array, dtype_name):
    """Round a float array to `dtype_name` (a safetensors float type); refuse values that would overflow.

    Rounding loses digits, which is what a smaller type is for; overflow turns weights into infinities,
    which would make the saved model useless, so that is an error rather than a NumPy warning.
    """
    with np.errstate(over="ignore"):
        if dtype_name == "BF16":
            data = float32_to_bf16_bits(array).astype("<u2")
            stored = bf16_bits_to_float32(data)
        else:
            data = stored = np.ascontiguousarray(array, dtype=FILE_DTYPES[dtype_name])
    if np.any(np.isinf(stored) & np.isfinite(array)):
        raise CheckpointError(f"cannot write {short_repr(name)} to {path} as {dtype_name}: some values are "
                              f"too large for {dtype_name} and would become infinite; choose a wider dtype "
                              "(f16 reaches 6.5e4, bf16 and f32 3.4e38, f64 1.8e308)")
    return data.reshape(-1)
