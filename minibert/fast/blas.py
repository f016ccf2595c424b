"""How many threads NumPy's BLAS runs a matmul on, read and set through ctypes.

NumPy has no function for this. Its wheels ship OpenBLAS as "scipy-openblas" (symbols prefixed `scipy_`,
64-bit integers suffixed `64_`) beside the package: `numpy.libs` on Linux and Windows, `numpy/.dylibs` on
macOS. Opening that file again with ctypes returns the library NumPy already loaded, so its
`openblas_set_num_threads` changes NumPy's own matmuls (threadpoolctl does the same for every BLAS it
knows). Anywhere else (MKL, Accelerate, a system OpenBLAS we do not find) `openblas()` is None, and BLAS
keeps its own threads (process.py).
"""

import ctypes
import functools
from pathlib import Path

import numpy as np

# (set, get) function names, the wheels' first
FUNCTION_NAMES = (
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)


class OpenBLAS:
    """NumPy's OpenBLAS: `threads` reads and sets how many threads its matmuls use."""

    def __init__(self, path, set_threads, get_threads):
        self.path = path
        self._set, self._get = set_threads, get_threads
        self._set.argtypes, self._set.restype = [ctypes.c_int], None
        self._get.argtypes, self._get.restype = [], ctypes.c_int

    @property
    def threads(self):
        return self._get()

    @threads.setter
    def threads(self, count):
        self._set(count)


def _library_files():
    package = Path(np.__file__).parent
    for folder in (package.parent / "numpy.libs", package / ".dylibs"):
        if folder.is_dir():
            yield from sorted(folder.glob("*openblas*"))


@functools.cache
def openblas():
    """The OpenBLAS NumPy uses, as an `OpenBLAS`, or None when it is not one we can find."""
    for path in _library_files():
        library = openblas_at(path)
        if library is not None:
            return library
    return None


def openblas_at(path):
    """The OpenBLAS in the library file `path`, as an `OpenBLAS`, or None when it cannot be opened or has no
    thread-count functions."""
    try:
        library = ctypes.CDLL(str(path))
    except OSError:
        return None
    for set_name, get_name in FUNCTION_NAMES:
        set_threads, get_threads = getattr(library, set_name, None), getattr(library, get_name, None)
        if set_threads is not None and get_threads is not None:
            return OpenBLAS(path, set_threads, get_threads)
    return None
