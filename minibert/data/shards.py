"""Pretraining instances on disk: `.npz` shards of fixed-size arrays, and a small JSON manifest.

Writing streams: rows go into one preallocated shard buffer (`rows_per_shard` rows), which is written out when
full, so memory stays one shard however large the corpus (google-research/bert #117, #612). Every shard holds
`rows_per_shard` rows but the last of a split.

Each file is written under a temporary name and renamed into place (`os.replace` is atomic), so a build that
is interrupted never leaves a half shard that looks complete. Reading never unpickles (`allow_pickle=False`)
and checks every array's name, dtype and shape against the manifest.
"""

# The layout of an output folder:
#     out/manifest.json       format, build options, special token ids, fields, and per split its shard files
#     out/train-00000.npz     {field: (rows, *row shape) array}
#     out/eval-00000.npz

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from minibert.errors import DataError

MANIFEST = "manifest.json"
FORMAT = "minibert-pretraining-shards"
VERSION = 1


def write_atomically(path, write):
    """Call `write(file)` on a temporary file beside `path`, then rename it to `path`."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as file:
        write(file)
    os.replace(partial, path)


class ShardWriter:
    """Stream rows of one split into `directory/<split>-NNNNN.npz` shards.

    fields: {name: (dtype, shape of one row)}. `write(rows)` takes a dict of arrays with any number of rows.
    """

    def __init__(self, directory, split, fields, rows_per_shard=4096):
        self.directory, self.split, self.fields = Path(directory), split, fields
        self.directory.mkdir(parents=True, exist_ok=True)
        self.rows_per_shard = rows_per_shard
        self.buffer = {name: np.zeros((rows_per_shard, *shape), dtype)
                       for name, (dtype, shape) in fields.items()}
        self.filled, self.shards = 0, []

    def write(self, rows):
        count = len(next(iter(rows.values())))
        done = 0
        while done < count:
            take = min(count - done, self.rows_per_shard - self.filled)
            for name in self.fields:
                self.buffer[name][self.filled:self.filled + take] = rows[name][done:done + take]
            self.filled += take
            done += take
            if self.filled == self.rows_per_shard:
                self.flush()

    def flush(self):
        if not self.filled:
            return
        name = f"{self.split}-{len(self.shards):05d}.npz"
        arrays = {field: values[:self.filled] for field, values in self.buffer.items()}
        write_atomically(self.directory / name, lambda file: np.savez(file, **arrays))
        self.shards.append({"file": name, "rows": self.filled})
        self.filled = 0

    def close(self):
        """Write the last, partial shard; returns the split's manifest entry."""
        self.flush()
        return {"rows": sum(shard["rows"] for shard in self.shards), "shards": self.shards}


def write_manifest(directory, manifest):
    text = json.dumps({"format": FORMAT, "version": VERSION, **manifest}, indent=2) + "\n"
    write_atomically(Path(directory) / MANIFEST, lambda file: file.write(text.encode("utf-8")))


def read_manifest(directory):
    """The manifest of a shard directory, or DataError saying how to build one."""
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"no {MANIFEST} in {directory}: build the pretraining data first, "
                        "e.g. `python -m minibert data --corpus pydocs`") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise DataError(f"{path} is not valid JSON ({error}); rebuild the pretraining data") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise DataError(f"{path} is not a {FORMAT} manifest of version {VERSION}; "
                        "rebuild the pretraining data")
    return manifest


def manifest_fields(manifest):
    """{name: (dtype, row shape)} of the fields the manifest's shards hold."""
    return {name: (np.dtype(spec["dtype"]), tuple(spec["shape"]))
            for name, spec in manifest["fields"].items()}


def read_shard(path, fields, rows):
    """Load one shard and check it holds exactly `fields` ({name: (dtype, row shape)}) with `rows` rows."""
    try:
        with np.load(path, allow_pickle=False) as shard:
            arrays = {name: shard[name] for name in shard.files}
    except FileNotFoundError:
        raise DataError(f"shard {path} is missing; rebuild the pretraining data") from None
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as error:
        raise DataError(f"shard {path} cannot be read ({error}); rebuild the pretraining data") from None
    if set(arrays) != set(fields):
        raise DataError(f"shard {path} holds {sorted(arrays)}, the manifest announces {sorted(fields)}; "
                        "rebuild the pretraining data")
    for name, (dtype, shape) in fields.items():
        if arrays[name].dtype != dtype or arrays[name].shape != (rows, *shape):
            raise DataError(f"shard {path}: {name} is {arrays[name].dtype} {arrays[name].shape}, "
                            f"the manifest announces {np.dtype(dtype)} {(rows, *shape)}; "
                            "rebuild the pretraining data")
    return arrays
