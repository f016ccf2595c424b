"""The error function erf, which NumPy lacks and the exact GELU needs: W. J. Cody's rational approximations.

W. J. Cody, "Rational Chebyshev approximations for the error function", Mathematics of Computation 23
(1969), 631-637; the coefficients of his double-precision routine CALERF (netlib `specfun`). Two versions of
the same formulas: `erf_numpy(x)`, vectorised (every range evaluated on the whole array, then `np.where`
picks), and `erf(x)`, one number, compiled by Numba for use inside kernels. Numba's own `math.erf` is a
scalar library call; this one is a few multiply-adds and one division, so a loop calling it runs in SIMD
registers when compiled with error_model="numpy" (see simd.py).
"""

import math

import numpy as np
from numba import njit

from minibert.kernels.simd import fast_exp, fast_exp_single

# For z = |x|, three ranges, each a ratio of two polynomials:
#
#     z <= 0.46875:      erf(x)  = x · A(z²) / B(z²)
#     0.46875 < z <= 4:  erfc(z) = exp(-z²) · C(z) / D(z)
#     z > 4:             erfc(z) = exp(-z²) / z · (1/√π - t · P(t) / Q(t)),   t = 1 / z²
#
# and erf(x) = sign(x) · (1 - erfc(z)) outside the first range. Against `math.erf` on a grid of [-8, 8] the
# largest error is 2.2e-16 (NumPy) and 3.3e-16 (Numba, whose exp differs in the last bit), one or two units
# in the last place of 1 (tests/test_kernels.py checks 4.5e-16). The Numerical Recipes fit used before was
# good to 1.2e-7 only, which kept the NumPy backend off the float64 golden reference.
#
# Polynomial coefficients, highest power first (Cody's arrays, reordered for Horner's rule).
ERF_NUMERATOR = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
                 3.77485237685302021e02, 3.20937758913846947e03)  # A
ERF_DENOMINATOR = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
                   2.84423683343917062e03)  # B
ERFC_NUMERATOR = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
                  6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
                  1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)  # C
ERFC_DENOMINATOR = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
                    1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
                    3.43936767414372164e03, 1.23033935480374942e03)  # D
TAIL_NUMERATOR = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
                  1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)  # P
TAIL_DENOMINATOR = (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
                    6.05183413124413191e-2, 2.33520497626869185e-3)  # Q
SMALL = 0.46875  # end of the first range
TAIL = 4.0  # start of the third
INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
INV_SQRT_2 = 1.0 / math.sqrt(2.0)


def horner(coefficients, t):
    """c0 t^n + c1 t^(n-1) + ... + cn, for a number or an array t (float32 throughout for a float32 t and
    float32 coefficients)."""
    total = coefficients[0]
    for c in coefficients[1:]:
        total = total * t + c
    return total


def erf_numpy(x):
    """erf of every entry of a float array (float64 arithmetic inside, x's dtype out)."""
    z = np.abs(x.astype(np.float64))
    # Each range's formula on its own inputs; the clips keep the others finite (no 1/0, no overflow).
    small = np.minimum(z, SMALL)
    middle = np.clip(z, SMALL, TAIL)
    tail = np.maximum(z, TAIL)
    gaussian = np.exp(-z * z)  # exp(-z²), the factor erfc shares in both outer ranges
    erf_small = small * horner(ERF_NUMERATOR, small * small) / horner(ERF_DENOMINATOR, small * small)
    erfc_middle = gaussian * horner(ERFC_NUMERATOR, middle) / horner(ERFC_DENOMINATOR, middle)
    t = 1.0 / (tail * tail)
    erfc_tail = gaussian / tail * (INV_SQRT_PI - t * horner(TAIL_NUMERATOR, t) / horner(TAIL_DENOMINATOR, t))
    erf_abs = np.where(z <= SMALL, erf_small, 1.0 - np.where(z <= TAIL, erfc_middle, erfc_tail))
    return np.copysign(erf_abs, x).astype(x.dtype, copy=False)


_horner = njit(cache=True, inline="always")(horner)


@njit(cache=True, error_model="numpy", inline="always")
def erf(x):
    """erf of one float64 number: erf_numpy's formulas, all three evaluated, then the right one kept.

    Computing every range (rather than branching to one) keeps the loop that calls this free of branches,
    so the compiler can run it on several numbers at once in SIMD registers.
    """
    z = abs(x)
    small = min(z, SMALL)
    middle = min(max(z, SMALL), TAIL)
    tail = max(z, TAIL)
    gaussian = fast_exp(-z * z)
    erf_small = small * _horner(ERF_NUMERATOR, small * small) / _horner(ERF_DENOMINATOR, small * small)
    erfc_middle = gaussian * _horner(ERFC_NUMERATOR, middle) / _horner(ERFC_DENOMINATOR, middle)
    t = 1.0 / (tail * tail)
    erfc_tail = gaussian / tail * (INV_SQRT_PI
                                   - t * _horner(TAIL_NUMERATOR, t) / _horner(TAIL_DENOMINATOR, t))
    erf_abs = erf_small if z <= SMALL else 1.0 - (erfc_middle if z <= TAIL else erfc_tail)
    return math.copysign(erf_abs, x)


# ---------------------------------------------------------------------------------------------------------
# For float32 kernels: one fit to single precision, sharing its exp with the normal density
#
# A float32 result has 24 bits, so Cody's 53-bit formulas (three ranges, three divisions) do more work than
# the result can keep. The float32 kernels need Phi(x) and, for GELU's slope, the density
# phi(x) = exp(-x²/2) / √(2π). Both contain exp(-x²/2) = exp(-z²) with z = |x| / √2, so we write the tail as
#
#     erfc(z) = t · exp(-z²) · P(t),   t = 1 / (1 + z/2),   P a polynomial of degree 10,
#
# and the one exp serves both. P(t) = erfc(z) · exp(z²) / t is a smooth function of t in (0, 1] (t -> 0 as
# z -> infinity, where P -> 1/(2√π); P(1) = 1 at z = 0), so a polynomial fits it well: MILLS_FIT is its
# least-squares fit in Chebyshev polynomials at 4000 Chebyshev points of [0, 1], converted to powers of t
# (tests/test_kernels.py repeats the fit from math.erfc). Its relative error is below 1.2e-8 for every
# z >= 0. (The form of t is that of Press et al.'s erfcc, "Numerical Recipes" §6.2, which fits log P
# instead and needs a second exp.)
#
# Relative error on erfc means the normal CDF is as good in the far left tail, where Phi(x) is tiny and
# GELU's output is x · Phi(x).
#
# The arithmetic is float32, so a SIMD register holds twice as many numbers as in float64 (8 with AVX2, 16
# with AVX-512). The one delicate step is exp(-x²/2): x²/2 rounded to float32 is off by up to x²/2 · 6e-8,
# and the exp's relative error is as large (2e-6 at x = 8). So |x| is split into a part with 12 significant bits
# and the rest, |x| = x_hi + x_lo: x² = x_hi² + x_lo (2 x_hi + x_lo), where x_hi² is exact in float32 and the
# second term is small, so its rounding is negligible; it goes into the exp as simd.py's `tail`. The other
# steps round once each. The results are within 4.5e-7 relative of Phi and phi (up to about four float32
# ulps, the most near x = 0, where P's alternating coefficients cancel; float64 arithmetic would give one ulp;
# what the float32 lanes save: docs/performance.md, AVX2).
MILLS_FIT = (0.0431730663044013, -0.2346054925130675, 0.49338574583743344, -0.45456372277054713,
             0.13185004332517625, -0.05905091128146413, 0.09341474878481863, 0.17532407535658945,
             0.24688387983251547, 0.28209377678963715, 0.2820947950644313)  # P, highest power first
MILLS_FIT_SINGLE = tuple(np.float32(c) for c in MILLS_FIT)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
HIGH_BITS_SINGLE = np.int32(-4096)  # a float32's sign, exponent and top 11 stored bits: 12 significant bits
_HALF_SINGLE, _ONE_SINGLE = np.float32(0.5), np.float32(1.0)
_T_SLOPE_SINGLE = np.float32(0.5 * INV_SQRT_2)  # t = 1 / (1 + z/2), z = |x| / √2
_INV_SQRT_2PI_SINGLE = np.float32(INV_SQRT_2PI)


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
