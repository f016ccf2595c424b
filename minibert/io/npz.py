"""minibert's own checkpoint container: named arrays plus a JSON description, in one .npz file.

An .npz file is a zip archive holding one `.npy` file per array (NumPy's own format: a short text header
with dtype and shape, then the raw bytes). We add one member, `__meta__`, holding UTF-8 JSON as a uint8
array: the model config, the training step, the optimizer settings, the random generator's state.

Why not pickle, like `torch.save`? Unpickling runs whatever code the file names, so opening a stranger's
checkpoint would hand them your computer. Here every member is plain numbers, and `allow_pickle=False`
plus a dtype check refuse anything else (an "object array" is a pickle in disguise).
"""

# `np.load(path, allow_pickle=False)` opens these files too.
#
# Reading checks each member's header against the bytes really present before allocating its array, so a
# damaged or hostile file is refused with a `CheckpointError` instead of a crash or a huge allocation.
# Members are stored uncompressed, so the bytes an array claims must exist in the file.

import math
import os
import zipfile

import numpy as np

from minibert.errors import CheckpointError, short_repr
from minibert.io.atomic import atomic_write
from minibert.io.strict_json import parse_json_object
from minibert.surrogates import record_json

META_KEY = "__meta__"
# Array kinds a checkpoint may hold: floats, signed and unsigned integers, bools.
NUMERIC_KINDS = "fiub"

_CORRUPT = "the file is damaged or was not written by minibert: save it again or use an earlier checkpoint"


def save_arrays(path, arrays, meta):
    """Write `arrays` (name -> array of numbers) and `meta` (a JSON-able dict) to `path`, atomically.

    The old file at `path`, if any, stays intact until the new one is complete on disk.
    """
    if not isinstance(meta, dict):
        raise CheckpointError(f"cannot write {path}: meta must be a dict, not {type(meta).__name__}")
    try:
        meta_text = record_json(meta, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"cannot write {path}: its meta must be JSON ({error}); convert NumPy numbers "
                              "with float()/int(), or store arrays as arrays") from error
    members = {META_KEY: np.frombuffer(meta_text.encode("utf-8"), dtype=np.uint8)}
    for name, value in arrays.items():
        array = np.asarray(value)
        # A zip member name stops at a NUL character, so such a name would not read back.
        if not isinstance(name, str) or not name or name == META_KEY or "\x00" in name:
            raise CheckpointError(f"cannot write array name {short_repr(name)} to {path}: names must be "
                                  f"non-empty strings without NUL characters, other than {META_KEY!r}")
        if array.dtype.kind not in NUMERIC_KINDS:
            raise CheckpointError(f"cannot write {name!r} ({array.dtype}) to {path}: a checkpoint holds "
                                  "arrays of numbers or bools only; convert it, e.g. .astype(np.float32)")
        members[name] = array
    with atomic_write(path) as file, zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        for name, array in members.items():
            # force_zip64: the member's size is unknown when writing starts, and may pass 4 GB.
            with archive.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def load_arrays(path, meta_only=False):
    """Read a file written by `save_arrays`; return `(arrays, meta)`. Problems raise `CheckpointError`.

    meta_only: read just the metadata (arrays is then empty), to learn what a file holds without reading
    its megabytes of weights."""
    try:
        file_size = os.stat(path).st_size
        with zipfile.ZipFile(path) as archive:
            members = _list_members(path, archive, file_size)
            arrays = {name: _read_member(path, archive, info, name) for name, info in members.items()
                      if name == META_KEY or not meta_only}
    except CheckpointError:
        raise
    except FileNotFoundError as error:
        raise CheckpointError(f"{path}: no such file; check the path") from error
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError, RuntimeError,
            NotImplementedError, OverflowError) as error:
        # zipfile and NumPy's .npy reader raise all of these for damaged input; RuntimeError covers an
        # encrypted member and a header nested too deeply.
        raise CheckpointError(f"{path}: cannot read it as a checkpoint ({type(error).__name__}: "
                              f"{short_repr(str(error), 200)}); {_CORRUPT}") from error
    meta = arrays.pop(META_KEY, None)
    if meta is None or meta.dtype != np.uint8 or meta.ndim != 1:
        raise CheckpointError(f"{path}: no {META_KEY} member of UTF-8 JSON bytes, so save_arrays did not "
                              "write it; for plain arrays use np.load(path, allow_pickle=False)")
    try:
        text = meta.tobytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise CheckpointError(f"{path}: {META_KEY} is not UTF-8 text; {_CORRUPT}") from error
    return arrays, parse_json_object(text, path, what=META_KEY)


def _list_members(path, archive, file_size):
    """Map array names to their zip entries, refusing anything save_arrays would not have written."""
    members = {}
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise CheckpointError(f"{path}: member {short_repr(info.filename)} is not a .npy array; "
                                  f"{_CORRUPT}")
        name = info.filename[: -len(".npy")]
        if name in members:
            raise CheckpointError(f"{path}: array {short_repr(name)} appears twice; {_CORRUPT}")
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"{path}: array {short_repr(name)} is compressed; minibert reads only "
                                  "uncompressed members (np.savez, not np.savez_compressed): save it again")
        # Stored data sits inside the file, so a member claiming more bytes than the file has is a lie.
        if info.file_size != info.compress_size or info.header_offset + info.compress_size > file_size:
            raise CheckpointError(f"{path}: array {short_repr(name)} claims {info.file_size} bytes, past the "
                                  f"end of the {file_size}-byte file; the file is truncated: {_CORRUPT}")
        members[name] = info
    return members


def _read_member(path, archive, info, name):
    """Read one .npy member: check its header (dtype, shape) against its size, then read the data."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise CheckpointError(f"{path}: array {short_repr(name)} uses .npy version {version}, which a "
                                  f"checkpoint of numbers never needs; {_CORRUPT}")
        if dtype.hasobject or dtype.kind not in NUMERIC_KINDS:
            raise CheckpointError(
                f"{path}: array {short_repr(name)} has dtype {dtype}; minibert refuses it because only arrays"
                " of numbers are safe to load (object arrays need pickle, which can run code from the file). "
                "Re-save it with numeric arrays only")
        count = math.prod(shape)  # Python ints: a hostile shape cannot overflow
        if min(shape, default=0) < 0 or count * dtype.itemsize != info.file_size - member.tell():
            raise CheckpointError(f"{path}: array {short_repr(name)} has shape {shape} of {dtype} but "
                                  f"{info.file_size - member.tell()} bytes of data; {_CORRUPT}")
        flat = np.empty(count, dtype=dtype)
        if member.readinto(memoryview(flat).cast("B")) != flat.nbytes:
            raise CheckpointError(f"{path}: array {short_repr(name)} ends early; {_CORRUPT}")
    array = flat.reshape(shape, order="F" if fortran_order else "C")
    return array.astype(dtype.newbyteorder("="), copy=False)
