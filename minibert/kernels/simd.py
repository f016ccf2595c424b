"""What lets the kernels' inner loops run on SIMD registers: a vectorisable exp, and reorderable sums.

Numba turns `math.exp` into a call to the C library, one element at a time: without Intel's SVML (not a
dependency of minibert) LLVM cannot put it in SIMD registers, and NumPy's own vectorised `np.exp` then
beats a Numba loop. `fast_exp` is plain arithmetic (Cody & Waite, "Software Manual for the Elementary
Functions", 1980), so a loop that calls it vectorises; `VECTOR_SUMS` lets a loop's sum be reordered into
SIMD lanes. Both are explained where they are defined below.
"""

import math

import numpy as np
from numba import njit

LOG2_E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # ln 2 with its last 21 bits zeroed: n * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10  # ln 2 - LN2_HI
EXP_MIN = -708.0
EXP_MAX = 709.0

# A loop that sums (`total += value`) vectorises only if LLVM may add in another order (8 partial sums, then
# those): VECTOR_SUMS is the fastmath flag that allows just that, for a whole function. The kernels keep such
# sums in float64, so the changed order costs nothing measurable. But the flag lets LLVM regroup ANY additions
# in that function, e.g. (x + mask) - row_max into x + (mask - row_max), which is not a rounding difference
# when mask is -3.4e38. So a kernel carries VECTOR_SUMS only if all its values are of ordinary size; the
# softmax forward, which adds huge masks, stays strict, and only its helper that sums the exps (terms in
# [0, 1]) carries the flag. (Flags belong to the function that sets them: fast_exp and the helpers keep their
# own when inlined.)
VECTOR_SUMS = {"reassoc"}

# fast_exp, the classic recipe:
#     exp(x) = 2**n * exp(r),   n = round(x / ln 2),   r = x - n ln 2,   |r| <= ln(2)/2 ~ 0.347
# - r is computed with ln 2 split into a high part with trailing zero bits (so n * LN2_HI is exact) and a
#   small low part: this keeps r accurate to the last bit even when n is large.
# - exp(r) is its Taylor series up to r**12: the first term left out, 0.347**13 / 13!, is 1.7e-16 relative.
# - 2**n is built directly as a float64: exponent bits n + 1023 shifted into place.
# It works in float64 for both dtypes (float32 inputs are widened). Max relative error against np.exp in
# float64: 5e-16 (2 ulp); float32 results are within half a float32 ulp (6e-8). Inputs below -708 (where
# 2**n would leave float64's normal range) return 0; above 709, a huge finite number. The kernels only call
# it on x - max(x) <= 0, or where a huge value is harmless (1 / (1 + huge) = 0).


@njit(cache=True, fastmath={"contract"})  # contract: fused multiply-adds, one rounding each
def fast_exp(x):
    clamped = min(max(x, EXP_MIN), EXP_MAX)
    n = math.floor(clamped * LOG2_E + 0.5)
    r = (clamped - n * LN2_HI) - n * LN2_LO
    # Taylor series of exp(r) in Horner form: 1 + r(1 + r/2(1 + r/3(...)))
    p = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r * (
        1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (1 / 3628800 + r * (1 / 39916800 + r / 479001600)))
    ))))))))
    two_to_n = np.int64((np.int64(n) + 1023) << 52).view(np.float64)
    return 0.0 if x < EXP_MIN else p * two_to_n


# The float32 twin: a float32 result keeps 24 bits, so the series can stop at r**7 (0.347**8 / 8! = 5e-9)
# and every operation runs on float32 numbers, twice as many per SIMD register as float64. ln 2 is split
# as in Cephes' expf (its high part has 9 bits, so n * LN2_HI_SINGLE is exact for every |n| <= 127).
# Measured max relative error against np.exp in float64 on [-87, 88]: 1.0e-7 (about one float32 ulp) for
# an exact float32 argument. The argument itself carries float32 rounding (x - max(x) is off by up to
# |x| * 6e-8), so callers use it where the values that matter are near 0: the exps of a softmax or a
# cross-entropy, whose small terms weigh nothing in the sum, or pass the rounding error as `tail`.
LOG2_E_SINGLE = np.float32(LOG2_E)
LN2_HI_SINGLE = np.float32(0.693359375)
LN2_LO_SINGLE = np.float32(math.log(2) - 0.693359375)
EXP_MIN_SINGLE = np.float32(-87.0)  # exp(-87.3) is float32's smallest normal number
EXP_MAX_SINGLE = np.float32(88.0)
_ONE, _HALF, _ZERO = np.float32(1.0), np.float32(0.5), np.float32(0.0)
_C2, _C3, _C4, _C5, _C6, _C7 = (np.float32(1 / math.factorial(k)) for k in range(2, 8))


@njit(cache=True, fastmath={"contract"})
def fast_exp_single(x, tail=_ZERO):
    """exp(x + tail) of float32 numbers, in float32 arithmetic (see above). `tail`, a small correction
    (|tail| < 0.05) kept apart because x + tail would round, joins the reduced argument r, where it loses
    nothing: how the float32 GELU takes exp(-x²/2) with x² split into two exact parts
    (fast/kernels/normal_cdf_single.py)."""
    clamped = min(max(x, EXP_MIN_SINGLE), EXP_MAX_SINGLE)
    n = np.float32(math.floor(clamped * LOG2_E_SINGLE + _HALF))
    r = ((clamped - n * LN2_HI_SINGLE) - n * LN2_LO_SINGLE) + tail
    p = _ONE + r * (_ONE + r * (_C2 + r * (_C3 + r * (_C4 + r * (_C5 + r * (_C6 + r * _C7))))))
    two_to_n = np.int32((np.int32(n) + np.int32(127)) << np.int32(23)).view(np.float32)
    return _ZERO if x < EXP_MIN_SINGLE else p * two_to_n


@njit(cache=True)
def vector_max(values):
    """max(values) of a non-empty 1-D array, in its dtype: eight running maxima, combined at the end.

    A single running maximum is one long chain of dependent comparisons. Eight independent ones fill the
    SIMD lanes, and a max gives the same answer in any order (bench/choices.py times both on attention's
    score rows; docs/performance.md keeps the figures).
    """
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = values[0]
    whole = len(values) // 8 * 8
    for j in range(0, whole, 8):
        m0, m1, m2, m3 = max(m0, values[j]), max(m1, values[j + 1]), max(m2, values[j + 2]), max(m3, values[j + 3])
        m4, m5, m6, m7 = max(m4, values[j + 4]), max(m5, values[j + 5]), max(m6, values[j + 6]), max(m7, values[j + 7])
    for j in range(whole, len(values)):
        m0 = max(m0, values[j])
    return max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
