"""Phi(x) and phi(x), the normal CDF and density, for one float32 number in float32 arithmetic: the one
approximation the speed layer keeps, for the exact GELU of float32 models (bias_gelu.py).

Why: `math.erf` is a scalar library call, one element at a time, and float64 besides; a float32 result has
24 bits, and float32 arithmetic fills twice as many SIMD lanes. Both Phi(x) and phi(x) = exp(-x²/2) / √(2π)
contain exp(-x²/2) = exp(-z²) with z = |x| / √2, so the tail is written

    erfc(z) = t · exp(-z²) · P(t),   t = 1 / (1 + z/2),   P a polynomial of degree 10,

and one exp serves both. The form of t is that of Press et al.'s erfcc ("Numerical Recipes", §6.2), which fits
log P instead and needs a second exp. P(t) = erfc(z) · exp(z²) / t is smooth in t on (0, 1], so MILLS_FIT is
its least-squares fit in Chebyshev polynomials at 4000 Chebyshev points of [0, 1], converted to powers of t
(tests/test_fast.py repeats the fit from math.erfc and prints the largest error against math.erf).
"""

# The one delicate step is exp(-x²/2): x²/2 rounded to float32 is off by up to x²/2 · 6e-8, and the exp's
# relative error is as large (2e-6 at x = 8). So |x| is split into a part with 12 significant bits and the rest,
# |x| = x_hi + x_lo: x² = x_hi² + x_lo (2 x_hi + x_lo), where x_hi² is exact in float32 and the second term is
# small, so its rounding is negligible; it goes into the exp as simd.py's `tail`. The results are within 4.5e-7
# relative of Phi and phi (about four float32 ulps, the most near x = 0, where P's coefficients cancel).

import math

import numpy as np
from numba import njit

from minibert.kernels.simd import fast_exp_single

MILLS_FIT = (0.0431730663044013, -0.2346054925130675, 0.49338574583743344, -0.45456372277054713,
             0.13185004332517625, -0.05905091128146413, 0.09341474878481863, 0.17532407535658945,
             0.24688387983251547, 0.28209377678963715, 0.2820947950644313)  # P, highest power first
MILLS_FIT_SINGLE = tuple(np.float32(c) for c in MILLS_FIT)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
HIGH_BITS_SINGLE = np.int32(-4096)  # a float32's sign, exponent and top 11 stored bits: 12 significant bits
_HALF_SINGLE, _ONE_SINGLE = np.float32(0.5), np.float32(1.0)
_T_SLOPE_SINGLE = np.float32(0.5 / math.sqrt(2.0))  # t = 1 / (1 + z/2), z = |x| / √2
_INV_SQRT_2PI_SINGLE = np.float32(INV_SQRT_2PI)


def horner(coefficients, t):
    """c0 t^n + c1 t^(n-1) + ... + cn, for a number or an array t."""
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * t + c
    return total


_horner = njit(cache=True, inline="always")(horner)


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def normal_cdf_pdf_single(x):
    """(Phi(x), phi(x)) for one float32 number, in float32 arithmetic (relative error < 4.5e-7)."""
    a = abs(x)
    a_hi = np.int32(np.float32(a).view(np.int32) & HIGH_BITS_SINGLE).view(np.float32)
    a_lo = a - a_hi
    gaussian = fast_exp_single(-_HALF_SINGLE * a_hi * a_hi, -_HALF_SINGLE * a_lo * (a_hi + a_hi + a_lo))  # exp(-z²)
    t = _ONE_SINGLE / (_ONE_SINGLE + _T_SLOPE_SINGLE * a)
    left_tail = _HALF_SINGLE * t * gaussian * _horner(MILLS_FIT_SINGLE, t)  # Phi(-|x|) = erfc(z) / 2
    cdf = left_tail if x < 0 else _ONE_SINGLE - left_tail
    return cdf, _INV_SQRT_2PI_SINGLE * gaussian
