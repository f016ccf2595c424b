"""Dropout with its random draws made inside the kernel's one pass over memory: the speed layer's generator.

The rule is the core's (minibert/functional.py `dropout`): keep each element when its uniform draw u is below
keep = 1 - p, and scale the kept ones by 1/keep. Only where u comes from changes: element i's u is a fixed
function of the call's `seed` and of i (SplitMix64, Steele, Lea & Flood 2014, counter-based as in JAX), so no
array of draws is made or stored, the backward of a fused op can draw them again, and the NumPy reference and
the Numba kernel drop the very same elements. Shapes: elementwise, any shape; kernels see (n,).
"""

import math

import numpy as np
from numba import njit, prange

from minibert.fast.threads import launch
from minibert.kernels.dispatch import DtypeError, choose, float_array, same_shape

GAMMA = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio: SplitMix64's step between counters
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)  # Stafford's "Mix13" constants, as in splitmix64.c
MIX_2 = np.uint64(0x94D049BB133111EB)
SHIFT_1, SHIFT_2, SHIFT_3 = np.uint64(30), np.uint64(27), np.uint64(31)
FRACTION_BITS = 53  # a float64's significand: u = (number >> 11) / 2**53
DROP_LOW_BITS = np.uint64(64 - FRACTION_BITS)
KEEP_ALL = np.uint64(1 << FRACTION_BITS)  # the threshold of keep = 1: every draw is below it


def draw_seed(rng):
    """The seed of one dropout call: one uniform 64-bit number from the caller's Generator."""
    return rng.integers(0, 1 << 64, dtype=np.uint64)


def keep_factors(keep, dtype):
    """1/keep in x's dtype, and the kernel's integer threshold: for an integer m, m / 2**53 < keep exactly
    when m < ceil(keep * 2**53) (keep * 2**53 is exact in float64, a power-of-two scaling)."""
    return np.asarray(1, dtype) / np.asarray(keep, dtype), np.uint64(math.ceil(keep * 2.0**FRACTION_BITS))


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def splitmix64_numpy(seed, count):
    """SplitMix64 (Vigna's splitmix64.c, Java's SplittableRandom): 64-bit numbers that pass BigCrush."""
    # The first `count` numbers from `seed`: mix(seed + i * GAMMA) for i = 1 .. count (uint64 arithmetic
    # wraps around modulo 2**64, which is what the generator wants).
    z = np.uint64(seed) + np.arange(1, count + 1, dtype=np.uint64) * GAMMA
    z = (z ^ (z >> SHIFT_1)) * MIX_1
    z = (z ^ (z >> SHIFT_2)) * MIX_2
    return z ^ (z >> SHIFT_3)


def uniforms_numpy(seed, size):
    """The `size` draws u in [0, 1) of one call, float64: the top 53 bits of each SplitMix64 number, the way
    NumPy makes a float64 (element i takes number i + 1)."""
    return (splitmix64_numpy(seed, size) >> DROP_LOW_BITS) * 2.0**-FRACTION_BITS


def dropout_forward_numpy(x, seed, keep):
    # the core's rule with u = uniforms_numpy(seed); the scale is kept as a float per element (the kernel
    # keeps a bool), and `x * 0` rather than a plain 0 keeps the sign of zero and NaN as the kernel has them
    inverse, _ = keep_factors(keep, x.dtype)
    kept = (uniforms_numpy(seed, x.size) < keep).reshape(x.shape)
    return x * (kept.astype(x.dtype) * inverse), kept


def dropout_backward_numpy(grad_y, kept, keep):
    inverse, _ = keep_factors(keep, grad_y.dtype)
    return grad_y * (kept.astype(grad_y.dtype) * inverse)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: one fused pass, in parallel

@njit(cache=True, inline="always")
def _splitmix64(seed, j):
    z = seed + np.uint64(j) * GAMMA
    z = (z ^ (z >> SHIFT_1)) * MIX_1
    z = (z ^ (z >> SHIFT_2)) * MIX_2
    return z ^ (z >> SHIFT_3)


@njit(cache=True, inline="always")
def is_kept(seed, i, threshold):
    """Whether element i (from 0) of the call with this seed is kept: u, the top 53 bits of SplitMix64's
    number i + 1, is below keep, compared as integers with keep_factors' threshold."""
    return (_splitmix64(seed, i + 1) >> DROP_LOW_BITS) < threshold


@njit(parallel=True, cache=True)
def _dropout_flat(x, seed, threshold, inverse):
    # x (n,) -> y (n,), kept (n,) bool. One whole SplitMix64 number per element: cutting four 16-bit draws
    # out of each number, as a first version did, made this loop several times slower.
    y = np.empty_like(x)
    kept = np.empty(x.size, dtype=np.bool_)
    zero = inverse * 0
    for i in prange(x.size):
        keep_this = is_kept(seed, i, threshold)
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


def dropout_forward_numba(x, seed, keep):
    inverse, threshold = keep_factors(keep, x.dtype)
    y, kept = launch(_dropout_flat, x.size, np.ascontiguousarray(x).reshape(-1), seed, threshold, inverse[()])
    return y.reshape(x.shape), kept.reshape(x.shape)


def dropout_backward_numba(grad_y, kept, keep):
    inverse, _ = keep_factors(keep, grad_y.dtype)
    grad_x = launch(_dropout_backward_flat, grad_y.size, np.ascontiguousarray(grad_y).reshape(-1),
                    np.ascontiguousarray(kept).reshape(-1), inverse[()])
    return grad_x.reshape(grad_y.shape)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def check_keep(keep, op):
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"{op}: keep={keep} is the probability of keeping an element (1 - p); it must be in "
                         "(0, 1]")


def check_seed(seed, op):
    if not isinstance(seed, np.uint64):
        raise DtypeError(f"{op}: seed is {type(seed).__name__} {seed!r}; draw it with draw_seed(rng) (a numpy.uint64)")


def dropout_forward(x, seed, keep):
    """(y, kept): x with the elements whose draw u is >= keep zeroed and the rest scaled by 1/keep.
    seed: the call's uint64 seed (`draw_seed(rng)`); the same seed drops the same elements."""
    check_keep(keep, "dropout_forward")
    check_seed(seed, "dropout_forward")
    x = float_array(x, "x", "dropout_forward")
    return choose(dropout_forward_numpy, dropout_forward_numba)(x, seed, keep)


def dropout_backward(grad_y, kept, keep):
    """grad_x = grad_y * (1/keep where kept, else 0), from the forward's `kept`."""
    check_keep(keep, "dropout_backward")
    grad_y = float_array(grad_y, "grad_y", "dropout_backward")
    kept = np.asarray(kept, dtype=bool)
    same_shape(kept, "kept", grad_y, "grad_y", "dropout_backward")
    return choose(dropout_backward_numpy, dropout_backward_numba)(grad_y, kept, keep)
