"""Input checks and reshaping shared by every kernel.

Kernels work on float32 or float64 arrays and reduce over the LAST axis. Inside, an array of any leading
shape is viewed as a C-contiguous 2-D block of rows (rows, last axis); that keeps each Numba kernel to one
compiled version per dtype, and the caller gets its original shape back.

Bad input is caught here, before NumPy or Numba can fail with a message that names their internals.
"""

import math

import numpy as np

from minibert.errors import MinibertError, ShapeError

FLOAT_DTYPES = (np.float32, np.float64)


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


def as_rows(x):
    """A C-contiguous (rows, last axis) view of `x` (a copy only if `x` is not contiguous)."""
    return np.ascontiguousarray(x).reshape(math.prod(x.shape[:-1]), x.shape[-1])
