"""What every kernel's dispatcher does before the arithmetic: check the arrays it was handed, then choose
which of the kernel's two versions runs.

Checking: kernels work on float32 or float64 arrays and reduce over the LAST axis. Bad input is caught here,
once, before NumPy or Numba can fail with a message that names their internals; the ops above (functional.py,
autograd/ops.py) pass their arrays on without checking the same facts again. Inside, an array of any
leading shape is viewed as a C-contiguous 2-D block of rows (rows, last axis): one compiled version of each
Numba kernel per dtype, and the caller gets its original shape back.

Choosing: one switch between the plain-NumPy references and the Numba kernels. `choose` asks for it at call
time, so flipping it changes the whole library at once. It starts from the environment variable
MINIBERT_BACKEND (default "numba"), which lets a test run or a lesson pick a backend without touching code:

    MINIBERT_BACKEND=numpy python3 -m pytest
"""

import math
import os
from contextlib import contextmanager

import numpy as np

from minibert.errors import ConfigError, MinibertError, ShapeError

FLOAT_DTYPES = (np.float32, np.float64)
BACKENDS = ("numba", "numpy")


# ---------------------------------------------------------------------------------------------------------
# Checking the arrays

class DtypeError(MinibertError, TypeError):
    """An array whose dtype a kernel cannot work with."""


def float_array(x, name, op):
    """`x` as an ndarray of float32 or float64; anything else is refused with a message saying what to do."""
    x = np.asarray(x)
    if x.dtype not in FLOAT_DTYPES:
        raise DtypeError(
            f"{op}: {name} has dtype {x.dtype}; kernels take float32 or float64 arrays, "
            f"convert it first, e.g. {name}.astype(np.float32)"
        )
    return x


def like(y, x, name, op):
    """`y` as a float array of the same dtype as `x` (no copy when it already is)."""
    return float_array(y, name, op).astype(x.dtype, copy=False)


def same_shape(a, name_a, b, name_b, op):
    """Refuse two arrays that should have one shape but do not."""
    if a.shape != b.shape:
        raise ShapeError(f"{op}: {name_a} has shape {a.shape} but {name_b} has shape {b.shape}; "
                         "they must be equal")


def nonempty_last_axis(x, name, op):
    """Refuse arrays with no last axis, or an empty one: a reduction over it would be undefined."""
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ShapeError(f"{op}: {name} has shape {x.shape}; it needs a non-empty last axis to reduce over")


def check_matmul(a, b, op):
    """a and b as float arrays of one dtype, shaped (..., M, K) and (..., K, N) with the same leading axes;
    anything else is refused naming both shapes. The one check before a matrix product: the product itself
    is NumPy's `a @ b`, which calls BLAS (`@` in autograd/ops.py, F.linear, the speed layer's products)."""
    a, b = float_array(a, "a", op), float_array(b, "b", op)
    if a.dtype != b.dtype:
        raise DtypeError(f"{op}: a is {a.dtype} but b is {b.dtype}; cast one so both have the same dtype")
    if a.ndim < 2 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not fit; need (..., M, K) and (..., K, N) "
                         "with the same leading axes (broadcast them first)")
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"{op}: shapes {a.shape} and {b.shape} do not fit: the last axis of a ({a.shape[-1]}) "
                         f"must equal the second-to-last of b ({b.shape[-2]})")
    return a, b


def as_rows(x):
    """A C-contiguous (rows, last axis) view of `x` (a copy only if `x` is not contiguous)."""
    return np.ascontiguousarray(x).reshape(math.prod(x.shape[:-1]), x.shape[-1])


# ---------------------------------------------------------------------------------------------------------
# Choosing the backend

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
