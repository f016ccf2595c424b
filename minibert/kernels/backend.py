"""The one switch between the plain-NumPy references and the Numba kernels.

Every kernel module asks `get_backend()` at call time, so flipping the switch changes the whole library at
once. The starting value comes from the environment variable MINIBERT_BACKEND (default "numba"), which lets
a test run or a lesson pick a backend without touching code:

    MINIBERT_BACKEND=numpy python3 -m pytest
"""

import os
from contextlib import contextmanager

from minibert.errors import ConfigError

BACKENDS = ("numba", "numpy")


def _checked(name, where):
    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r} from {where}; choose one of {', '.join(BACKENDS)}")
    return name


_backend = _checked(os.environ.get("MINIBERT_BACKEND", "numba"), "the environment variable MINIBERT_BACKEND")


def set_backend(name):
    """Run every kernel from now on with `name`: "numba" (fast) or "numpy" (the readable references)."""
    global _backend
    _backend = _checked(name, "set_backend")


def get_backend():
    """The backend kernels use right now: "numba" or "numpy"."""
    return _backend


@contextmanager
def use_backend(name):
    """Use backend `name` inside a `with` block, then restore the one before (even after an error)."""
    previous = _backend
    set_backend(name)
    try:
        yield
    finally:
        set_backend(previous)


def choose(numpy_version, numba_version):
    """The one of a kernel's two versions that the current backend runs."""
    return numba_version if _backend == "numba" else numpy_version
