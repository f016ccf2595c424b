"""GELU, the activation of BERT's feed-forward layers (Hendrycks & Gimpel 2016): gelu(x) = x * Phi(x).

Phi is the standard normal CDF. Two forms, the values of `approximate` (`GELU_APPROXIMATIONS`):
- "none", the exact one: Phi(x) = 0.5 * (1 + erf(x / sqrt 2)). The paper's, the first Google release's and
  HuggingFace's `hidden_act="gelu"`.
- "tanh", the approximation Google's code later switched to (`gelu_new`):
  Phi(x) ~ 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).

Shapes: elementwise, any shape; the kernels see x flattened to (n,).
"""

# Phi scales a unit's input by how likely a normal draw is to be below it. `GELU_APPROXIMATIONS` is checked
# here for every layer above.
# x^3 is written x * x * x: NumPy's float32 power is a slow general pow, the products are cheap.

import math

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.kernels.arrays import as_rows, float_array, like, nonempty_last_axis, same_shape
from minibert.kernels.backend import choose
from minibert.kernels.erf import INV_SQRT_2, INV_SQRT_2PI, erf, erf_numpy, normal_cdf_pdf_single
from minibert.kernels.simd import fast_exp
from minibert.runtime.threads import launch

GELU_APPROXIMATIONS = ("none", "tanh")  # as torch.nn.functional.gelu names them
SUM_CHUNKS = 64  # row chunks of the bias gradient's sum (see _times_slope_with_column_sums)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715


def _check_approximate(approximate, op):
    if approximate not in GELU_APPROXIMATIONS:
        raise ValueError(f"{op}: approximate={approximate!r} is not a GELU form; use 'none' (exact, erf) "
                         "or 'tanh'")


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def gelu_forward_numpy(x, approximate="none"):
    if approximate == "tanh":
        u = SQRT_2_OVER_PI * (x + CUBIC * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(u))
    return 0.5 * x * (1.0 + erf_numpy(x * INV_SQRT_2))


def gelu_backward_numpy(grad_y, x, approximate="none"):
    if approximate == "tanh":
        # y = 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3)
        # dy/dx = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx,  du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        th = np.tanh(SQRT_2_OVER_PI * (x + CUBIC * x * x * x))
        du_dx = SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * x * x)
        return grad_y * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * du_dx)
    # y = x Phi(x)  =>  dy/dx = Phi(x) + x phi(x), with phi(x) = exp(-x^2 / 2) / sqrt(2 pi) the normal density
    cdf = 0.5 * (1.0 + erf_numpy(x * INV_SQRT_2))
    pdf = INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return grad_y * (cdf + x * pdf)


def gelu_with_slope_numpy(x, approximate="none"):
    # (y, dy/dx): the backward's factor is the backward of a gradient of ones
    return gelu_forward_numpy(x, approximate), gelu_backward_numpy(np.ones_like(x), x, approximate)


def bias_gelu_with_slope_numpy(x, bias, approximate="none"):
    return gelu_with_slope_numpy(x + bias, approximate)


def bias_gelu_backward_numpy(grad_y, slope):
    # y = gelu(x + bias)  =>  grad_x = grad_y * slope, and the bias, added to every row, gets their sum
    grad_x = grad_y * slope
    return grad_x, grad_x.reshape(-1, grad_x.shape[-1]).sum(axis=0)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: every element in one fused pass, in parallel
#
# The tanh form is computed through the sigmoid: 0.5 * (1 + tanh(u)) = 1 / (1 + exp(-2u)), so it needs only
# fast_exp, which vectorises (math.tanh would be a scalar library call, slower than NumPy's np.tanh).
# The exact form uses erf.py's erf (Cody's), the same formulas as the NumPy reference: Numba's math.erf is a
# scalar series expansion, called one element at a time, which keeps the loop out of SIMD registers.
# On float32 arrays it uses erf.py's `normal_cdf_pdf_single` instead (`single`), a fit to float32 precision
# in float32 arithmetic with one division where Cody's has three, whose exp also gives the density phi(x)
# the slope needs.
# error_model="numpy": a division by zero gives inf instead of raising, so Numba adds no check per division
# and the loops run in SIMD registers.

@njit(parallel=True, cache=True, error_model="numpy")
def _gelu_flat(x, tanh_form, single):
    # x (n,) -> y (n,). One loop per form, so the tanh loop has no branch in it and vectorises.
    y = np.empty_like(x)
    if tanh_form:
        for i in prange(x.size):
            v = np.float64(x[i])
            u = SQRT_2_OVER_PI * (v + CUBIC * v * v * v)
            y[i] = v / (1.0 + fast_exp(-2.0 * u))  # x * sigmoid(2u) = 0.5 x (1 + tanh u)
    elif single:
        for i in prange(x.size):
            v = np.float32(x[i])  # a no-op: `single` means x is float32 (the cast types the float64 build)
            y[i] = v * normal_cdf_pdf_single(v)[0]
    else:
        for i in prange(x.size):
            v = np.float64(x[i])
            y[i] = 0.5 * v * (1.0 + erf(v * INV_SQRT_2))
    return y


# (y, dy/dx) of one element v (float64), for each form: the forward and the backward's factor share Phi(v)
# or the sigmoid s. Used by the kernels below, with and without a bias added first.

@njit(cache=True, error_model="numpy", inline="always")
def _tanh_gelu_and_slope(v):
    u = SQRT_2_OVER_PI * (v + CUBIC * v * v * v)
    s = 1.0 / (1.0 + fast_exp(-2.0 * u))
    # y = x s, s = sigmoid(2u)  =>  dy/dx = s + x s (1 - s) 2 du/dx   (as s' = s (1 - s))
    return v * s, s + 2.0 * v * s * (1.0 - s) * SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * v * v)


@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _exact_gelu_and_slope_single(v):
    # v float32, and so is all arithmetic here
    cdf, pdf = normal_cdf_pdf_single(v)
    return v * cdf, cdf + v * pdf


@njit(cache=True, error_model="numpy", inline="always")
def _exact_gelu_and_slope(v):
    # y = x Phi(x)  =>  dy/dx = Phi(x) + x phi(x)
    cdf = 0.5 * (1.0 + erf(v * INV_SQRT_2))
    return v * cdf, cdf + v * INV_SQRT_2PI * fast_exp(-0.5 * v * v)


@njit(parallel=True, cache=True, error_model="numpy")
def _gelu_with_slope_flat(x, tanh_form, single):
    # x (n,) -> y (n,), slope (n,) = dy/dx
    y = np.empty_like(x)
    slope = np.empty_like(x)
    if tanh_form:
        for i in prange(x.size):
            y[i], slope[i] = _tanh_gelu_and_slope(np.float64(x[i]))
    elif single:
        for i in prange(x.size):
            y[i], slope[i] = _exact_gelu_and_slope_single(np.float32(x[i]))
    else:
        for i in prange(x.size):
            y[i], slope[i] = _exact_gelu_and_slope(np.float64(x[i]))
    return y, slope


@njit(parallel=True, cache=True, error_model="numpy")
def _bias_gelu_with_slope_rows(x, bias, tanh_form, single):
    # x (R, C), bias (C,) -> y (R, C), slope (R, C) of z = x + bias. z is rounded to x's dtype first, as
    # the plain ops store it (then widened, but for the float32 exact form).
    rows, cols = x.shape
    y = np.empty_like(x)
    slope = np.empty_like(x)
    for r in prange(rows):
        if tanh_form:
            for j in range(cols):
                y[r, j], slope[r, j] = _tanh_gelu_and_slope(np.float64(x[r, j] + bias[j]))
        elif single:
            for j in range(cols):
                y[r, j], slope[r, j] = _exact_gelu_and_slope_single(np.float32(x[r, j] + bias[j]))
        else:
            for j in range(cols):
                y[r, j], slope[r, j] = _exact_gelu_and_slope(np.float64(x[r, j] + bias[j]))
    return y, slope


@njit(parallel=True, cache=True)
def _times_slope_with_column_sums(grad_y, slope, chunks):
    # grad_y, slope (R, C) -> grad_x = grad_y * slope (R, C), and partial column sums of grad_x (chunks, C) in
    # float64: a fixed number of row chunks, each with its own sums, so the total has the same bits on any
    # number of threads (as layernorm.py's grad_weight)
    rows, cols = grad_y.shape
    grad_x = np.empty_like(grad_y)
    partial_sums = np.zeros((chunks, cols))
    for c in prange(chunks):
        for r in range(c * rows // chunks, (c + 1) * rows // chunks):
            for j in range(cols):
                g = grad_y[r, j] * slope[r, j]
                grad_x[r, j] = g
                partial_sums[c, j] += g
    return grad_x, partial_sums


def gelu_forward_numba(x, approximate="none"):
    return launch(_gelu_flat, x.size, np.ascontiguousarray(x).reshape(-1), approximate == "tanh",
                  x.dtype == np.float32).reshape(x.shape)


def gelu_backward_numba(grad_y, x, approximate="none"):
    # grad_x = grad_y * dy/dx, with dy/dx from the same fused kernel training uses (one set of formulas)
    return grad_y * gelu_with_slope_numba(x, approximate)[1]


def gelu_with_slope_numba(x, approximate="none"):
    y, slope = launch(_gelu_with_slope_flat, x.size, np.ascontiguousarray(x).reshape(-1), approximate == "tanh",
                      x.dtype == np.float32)
    return y.reshape(x.shape), slope.reshape(x.shape)


def bias_gelu_with_slope_numba(x, bias, approximate="none"):
    y, slope = launch(_bias_gelu_with_slope_rows, x.size, as_rows(x), bias, approximate == "tanh",
                      x.dtype == np.float32)
    return y.reshape(x.shape), slope.reshape(x.shape)


def bias_gelu_backward_numba(grad_y, slope):
    rows = as_rows(slope)
    chunks = max(1, min(SUM_CHUNKS, rows.shape[0]))
    grad_x, partial_sums = launch(_times_slope_with_column_sums, slope.size, as_rows(grad_y), rows, chunks)
    return grad_x.reshape(slope.shape), partial_sums.sum(axis=0).astype(slope.dtype)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def gelu_forward(x, approximate="none"):
    """y = x * Phi(x); approximate "none" (exact, erf) or "tanh"."""
    _check_approximate(approximate, "gelu_forward")
    x = float_array(x, "x", "gelu_forward")
    return choose(gelu_forward_numpy, gelu_forward_numba)(x, approximate)


def gelu_backward(grad_y, x, approximate="none"):
    """grad_x = grad_y * gelu'(x), for the same `approximate` as the forward."""
    _check_approximate(approximate, "gelu_backward")
    x = float_array(x, "x", "gelu_backward")
    grad_y = like(grad_y, x, "grad_y", "gelu_backward")
    same_shape(grad_y, "grad_y", x, "x", "gelu_backward")
    return choose(gelu_backward_numpy, gelu_backward_numba)(grad_y, x, approximate)


def gelu_with_slope(x, approximate="none"):
    """(y, dy/dx) in one pass. Training calls this instead of gelu_forward: the backward is then one
    multiplication, grad_x = grad_y * slope, and the erf (or tanh) is evaluated once per element instead of
    twice. Keeping `slope` costs what keeping x would: one array of x's shape."""
    _check_approximate(approximate, "gelu_with_slope")
    x = float_array(x, "x", "gelu_with_slope")
    return choose(gelu_with_slope_numpy, gelu_with_slope_numba)(x, approximate)


def _checked_x_and_bias(x, bias, approximate, op):
    """The form, x (..., C) as a float array and bias (C,) in x's dtype: the checks of both bias_gelu ops."""
    _check_approximate(approximate, op)
    x = float_array(x, "x", op)
    nonempty_last_axis(x, "x", op)
    bias = np.ascontiguousarray(like(bias, x, "bias", op))
    if bias.shape != x.shape[-1:]:
        raise ShapeError(f"{op}: bias has shape {bias.shape}; it must be ({x.shape[-1]},), the last axis of x "
                         f"{x.shape}")
    return x, bias


def bias_gelu_forward(x, bias, approximate="none"):
    """y = gelu(x + bias), bias (C,) added to every row of x (..., C): the forward alone, when no gradient is
    wanted (evaluation), so no slope is computed or kept."""
    x, bias = _checked_x_and_bias(x, bias, approximate, "bias_gelu_forward")
    return choose(gelu_forward_numpy, gelu_forward_numba)(x + bias, approximate)


def bias_gelu_with_slope(x, bias, approximate="none"):
    """(y, dy/dz) of y = gelu(z), z = x + bias (bias (C,) added to every row of x (..., C)), in one pass: the
    feed-forward's first Linear leaves its bias to this kernel, which adds it as it reads x, instead of a
    pass of its own over the (B, S, I) activations."""
    x, bias = _checked_x_and_bias(x, bias, approximate, "bias_gelu_with_slope")
    return choose(bias_gelu_with_slope_numpy, bias_gelu_with_slope_numba)(x, bias, approximate)


def bias_gelu_backward(grad_y, slope):
    """(grad_x, grad_bias) = (grad_y * slope, grad_x summed over every axis but the last)."""
    op = "bias_gelu_backward"
    slope = float_array(slope, "slope", op)
    nonempty_last_axis(slope, "slope", op)
    grad_y = like(grad_y, slope, "grad_y", op)
    same_shape(grad_y, "grad_y", slope, "slope", op)
    return choose(bias_gelu_backward_numpy, bias_gelu_backward_numba)(grad_y, slope)
