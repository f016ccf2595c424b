"""Inverted dropout (Srivastava et al. 2014) in one pass over memory.

Each element is kept with probability keep = 1 - p, and the kept ones are scaled by 1/keep, so that the
expected output equals the input and eval mode needs no rescaling:

    y = x * (1/keep)   where u < keep,   y = x * 0 elsewhere,   u ~ Uniform[0, 1) per element

The draws come from the caller's NumPy Generator, so a run is reproducible and both backends drop the same
elements. They are 16-bit integers b (u = b / 65536), which NumPy makes four times faster than float32
numbers, and a step of mini draws 18 million of them. The price: keep is rounded to a multiple of 1/65536
(0.9 becomes 0.899994, so p = 0.1 drops 0.0006% more often); the scale stays exactly 1/keep.
The forward returns which elements it kept, a bool array (one byte an element), and the backward scales
the gradient by the same factors: dy/dx = 1/keep or 0.

The NumPy reference makes four passes (compare, cast, scale, multiply) and keeps a float scale per element;
the Numba kernel makes one and keeps the bool. `x * 0` rather than a plain 0 keeps the sign of zero and
NaN as the reference has them, so both give the same bits.

Shapes: elementwise, any shape; x and its draws have one shape, and the kernels see them flattened to (n,).
"""

import numpy as np
from numba import njit, prange

from minibert.kernels.arrays import DtypeError, float_array, same_shape
from minibert.kernels.backend import choose
from minibert.kernels.threads import launch

BITS = 16
LEVELS = 1 << BITS  # the draws are integers in [0, LEVELS)


def draw_bits(rng, shape):
    """The random draws for one dropout: 16-bit integers, uniform over [0, 65536)."""
    return rng.integers(0, LEVELS, size=shape, dtype=np.uint16)


def _factors(keep, dtype):
    """The threshold the draws are compared with (keep in units of 1/65536; 65536 keeps everything) and
    1/keep in x's dtype."""
    return np.int64(round(keep * LEVELS)), np.asarray(1, dtype) / np.asarray(keep, dtype)


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def dropout_forward_numpy(x, bits, keep):
    threshold, inverse = _factors(keep, x.dtype)
    kept = bits < threshold
    return x * (kept.astype(x.dtype) * inverse), kept


def dropout_backward_numpy(grad_y, kept, keep):
    _, inverse = _factors(keep, grad_y.dtype)
    return grad_y * (kept.astype(grad_y.dtype) * inverse)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: one fused pass, in parallel

@njit(parallel=True, cache=True)
def _dropout_flat(x, bits, threshold, inverse):
    # x, bits (n,) -> y (n,), kept (n,) bool
    y = np.empty_like(x)
    kept = np.empty(x.size, dtype=np.bool_)
    zero = inverse * 0
    for i in prange(x.size):
        keep_this = bits[i] < threshold
        kept[i] = keep_this
        y[i] = x[i] * (inverse if keep_this else zero)
    return y, kept


@njit(parallel=True, cache=True)
def _dropout_backward_flat(grad_y, kept, inverse):
    # grad_y (n,), kept (n,) -> grad_x (n,)
    grad_x = np.empty_like(grad_y)
    zero = inverse * 0
    for i in prange(grad_y.size):
        grad_x[i] = grad_y[i] * (inverse if kept[i] else zero)
    return grad_x


def dropout_forward_numba(x, bits, keep):
    threshold, inverse = _factors(keep, x.dtype)
    y, kept = launch(_dropout_flat, x.size, np.ascontiguousarray(x).reshape(-1),
                     np.ascontiguousarray(bits).reshape(-1), threshold, inverse[()])
    return y.reshape(x.shape), kept.reshape(x.shape)


def dropout_backward_numba(grad_y, kept, keep):
    _, inverse = _factors(keep, grad_y.dtype)
    grad_x = launch(_dropout_backward_flat, grad_y.size, np.ascontiguousarray(grad_y).reshape(-1),
                    np.ascontiguousarray(kept).reshape(-1), inverse[()])
    return grad_x.reshape(grad_y.shape)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def _check_keep(keep, op):
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"{op}: keep={keep} is the probability of keeping an element (1 - p); it must be in "
                         "(0, 1]")


def dropout_forward(x, bits, keep):
    """(y, kept): x with the elements whose draw is >= keep * 65536 zeroed and the rest scaled by 1/keep.
    bits: uint16 draws of x's shape (`draw_bits`)."""
    _check_keep(keep, "dropout_forward")
    x = float_array(x, "x", "dropout_forward")
    bits = np.asarray(bits)
    if bits.dtype != np.uint16:
        raise DtypeError(f"dropout_forward: bits have dtype {bits.dtype}; draw them with "
                         "draw_bits(rng, x.shape) (uint16)")
    same_shape(bits, "bits", x, "x", "dropout_forward")
    return choose(dropout_forward_numpy, dropout_forward_numba)(x, bits, keep)


def dropout_backward(grad_y, kept, keep):
    """grad_x = grad_y * (1/keep where kept, else 0), from the forward's `kept`."""
    _check_keep(keep, "dropout_backward")
    grad_y = float_array(grad_y, "grad_y", "dropout_backward")
    kept = np.asarray(kept, dtype=bool)
    same_shape(kept, "kept", grad_y, "grad_y", "dropout_backward")
    return choose(dropout_backward_numpy, dropout_backward_numba)(grad_y, kept, keep)
