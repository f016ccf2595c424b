"""Inverted dropout (Srivastava et al. 2014), its random draws made inside the one pass over memory.

Each element is kept with probability keep = 1 - p, and the kept ones are scaled by 1/keep, so that the
expected output equals the input and eval mode needs no rescaling:

    y = x * (1/keep)   where u < keep,   y = x * 0 elsewhere,   u ~ Uniform[0, 1) per element

The draws are counter-based (as JAX's and, on GPUs, PyTorch's are): element i's draw is a fixed function
of the call's `seed` and of i alone, so no array of draws is ever written, any kernel in any order gets the
same numbers, and the NumPy reference below computes them the same way. The function is SplitMix64
(Steele, Lea & Flood 2014; the mixing constants are Vigna's, as in Java's SplittableRandom): the j-th number
it gives from `seed` is mix(seed + j * GAMMA), j = 1, 2, ..., 64 bits passing BigCrush. Each 64-bit number
gives four 16-bit draws b (u = b / 65536): element i takes bits 16k .. 16k + 15 of number j = i // 4 + 1,
k = i % 4. The seed is one number drawn from the caller's NumPy Generator per call, so a run is
reproducible. Drawing 18 million numbers a step with the Generator took 14 ms of mini's step; the fused
draws cost about a tenth of that.

The price of 16-bit draws: keep is rounded to a multiple of 1/65536 (0.9 becomes 0.899994, so p = 0.1
drops 0.0006% more often); the scale stays exactly 1/keep.
The forward returns which elements it kept, a bool array (one byte an element), and the backward scales
the gradient by the same factors: dy/dx = 1/keep or 0.

The NumPy reference makes its passes one at a time (draws, compare, cast, scale, multiply) and keeps a float
scale per element; the Numba kernel makes one pass and keeps the bool. `x * 0` rather than a plain 0 keeps
the sign of zero and NaN as the reference has them, so both give the same bits.

Shapes: elementwise, any shape; the kernels see x flattened to (n,).
"""

import numpy as np
from numba import njit, prange

from minibert.kernels.arrays import DtypeError, float_array, same_shape
from minibert.kernels.backend import choose
from minibert.kernels.threads import launch

BITS = 16
LEVELS = 1 << BITS  # the draws are integers in [0, LEVELS)
DRAWS_PER_NUMBER = 64 // BITS
GAMMA = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: SplitMix64's step between counters
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)
SHIFT_1, SHIFT_2, SHIFT_3 = np.uint64(30), np.uint64(27), np.uint64(31)
LOW_BITS = np.uint64(LEVELS - 1)


def draw_seed(rng):
    """The seed of one dropout call: one uniform 64-bit number from the caller's Generator."""
    return rng.integers(0, 1 << 64, dtype=np.uint64)


def _factors(keep, dtype):
    """The threshold the draws are compared with (keep in units of 1/65536; 65536 keeps everything) and
    1/keep in x's dtype."""
    return np.int64(round(keep * LEVELS)), np.asarray(1, dtype) / np.asarray(keep, dtype)


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def splitmix64_numpy(seed, count):
    """The first `count` numbers of SplitMix64 from `seed`: mix(seed + j * GAMMA) for j = 1 .. count.
    (uint64 arithmetic wraps around modulo 2**64, which is what the generator wants.)"""
    z = np.uint64(seed) + np.arange(1, count + 1, dtype=np.uint64) * GAMMA
    z = (z ^ (z >> SHIFT_1)) * MIX_1
    z = (z ^ (z >> SHIFT_2)) * MIX_2
    return z ^ (z >> SHIFT_3)


def draws_numpy(seed, size):
    """The `size` 16-bit draws of one call (uint16): four from each SplitMix64 number, lowest bits first."""
    numbers = splitmix64_numpy(seed, -(-size // DRAWS_PER_NUMBER))
    shifts = np.arange(DRAWS_PER_NUMBER, dtype=np.uint64) * np.uint64(BITS)
    return ((numbers[:, None] >> shifts) & LOW_BITS).astype(np.uint16).reshape(-1)[:size]


def dropout_forward_numpy(x, seed, keep):
    threshold, inverse = _factors(keep, x.dtype)
    kept = (draws_numpy(seed, x.size) < threshold).reshape(x.shape)
    return x * (kept.astype(x.dtype) * inverse), kept


def dropout_backward_numpy(grad_y, kept, keep):
    _, inverse = _factors(keep, grad_y.dtype)
    return grad_y * (kept.astype(grad_y.dtype) * inverse)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: one fused pass, in parallel

@njit(cache=True, inline="always")
def _splitmix64(seed, j):
    z = seed + np.uint64(j) * GAMMA
    z = (z ^ (z >> SHIFT_1)) * MIX_1
    z = (z ^ (z >> SHIFT_2)) * MIX_2
    return z ^ (z >> SHIFT_3)


@njit(parallel=True, cache=True)
def _dropout_flat(x, seed, threshold, inverse):
    # x (n,) -> y (n,), kept (n,) bool; one SplitMix64 number per four elements
    y = np.empty_like(x)
    kept = np.empty(x.size, dtype=np.bool_)
    zero = inverse * 0
    for block in prange((x.size + DRAWS_PER_NUMBER - 1) // DRAWS_PER_NUMBER):
        number = _splitmix64(seed, block + 1)
        first = block * DRAWS_PER_NUMBER
        for k in range(min(DRAWS_PER_NUMBER, x.size - first)):
            keep_this = ((number >> np.uint64(BITS * k)) & LOW_BITS) < threshold
            kept[first + k] = keep_this
            y[first + k] = x[first + k] * (inverse if keep_this else zero)
    return y, kept


@njit(parallel=True, cache=True)
def _dropout_backward_flat(grad_y, kept, inverse):
    # grad_y (n,), kept (n,) -> grad_x (n,)
    grad_x = np.empty_like(grad_y)
    zero = inverse * 0
    for i in prange(grad_y.size):
        grad_x[i] = grad_y[i] * (inverse if kept[i] else zero)
    return grad_x


def dropout_forward_numba(x, seed, keep):
    threshold, inverse = _factors(keep, x.dtype)
    # an unsigned threshold: Numba compares uint64 with int64 by converting both to float64
    y, kept = launch(_dropout_flat, x.size, np.ascontiguousarray(x).reshape(-1), np.uint64(seed),
                     np.uint64(threshold), inverse[()])
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


def dropout_forward(x, seed, keep):
    """(y, kept): x with the elements whose draw is >= keep * 65536 zeroed and the rest scaled by 1/keep.
    seed: the call's uint64 seed (`draw_seed(rng)`); the same seed drops the same elements."""
    _check_keep(keep, "dropout_forward")
    x = float_array(x, "x", "dropout_forward")
    if not isinstance(seed, np.uint64):
        raise DtypeError(f"dropout_forward: seed is {type(seed).__name__} {seed!r}; draw it with "
                         "draw_seed(rng) (a numpy.uint64)")
    return choose(dropout_forward_numpy, dropout_forward_numba)(x, seed, keep)


def dropout_backward(grad_y, kept, keep):
    """grad_x = grad_y * (1/keep where kept, else 0), from the forward's `kept`."""
    _check_keep(keep, "dropout_backward")
    grad_y = float_array(grad_y, "grad_y", "dropout_backward")
    kept = np.asarray(kept, dtype=bool)
    same_shape(kept, "kept", grad_y, "grad_y", "dropout_backward")
    return choose(dropout_backward_numpy, dropout_backward_numba)(grad_y, kept, keep)
