"""gelu(x + bias) and its slope in one pass: the feed-forward's first Linear leaves its bias to this kernel,
which adds it as it reads x, instead of a pass of its own over the (B, S, I) activations.

The forward keeps dy/dz (z = x + bias) instead of x: the same memory, and the backward is then one
multiplication, grad_x = grad_y * slope, with grad_bias the column sums of grad_x. Float32 models take the
exact GELU through normal_cdf_single.py's float32 fit; float64 (gradient checks) and the tanh form take the
core kernel's formulas (kernels/gelu.py `gelu_and_slope`). Shapes: x, y, slope (..., C), bias (C,); the
kernels see rows (R, C).
"""

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.fast.kernels.normal_cdf_single import normal_cdf_pdf_single
from minibert.fast.threads import launch
from minibert.kernels.dispatch import as_rows, choose, float_array, like, nonempty_last_axis, same_shape
from minibert.kernels.gelu import check_approximate, gelu_and_slope, gelu_backward_numpy, gelu_forward_numpy

SUM_CHUNKS = 64  # row chunks of the bias gradient's sum (see _times_slope_with_column_sums)


# ---------------------------------------------------------------------------------------------------------
# Readable references: the core's GELU on x + bias

def bias_gelu_with_slope_numpy(x, bias, approximate="none"):
    z = x + bias
    return gelu_forward_numpy(z, approximate), gelu_backward_numpy(np.ones_like(z), z, approximate)


def bias_gelu_backward_numpy(grad_y, slope):
    # y = gelu(x + bias)  =>  grad_x = grad_y * slope, and the bias, added to every row, gets their sum
    grad_x = grad_y * slope
    return grad_x, grad_x.reshape(-1, grad_x.shape[-1]).sum(axis=0)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels

@njit(cache=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _exact_gelu_and_slope_single(v):
    # v float32, and so is all arithmetic here: y = x Phi(x), dy/dx = Phi(x) + x phi(x)
    cdf, pdf = normal_cdf_pdf_single(v)
    return v * cdf, cdf + v * pdf


@njit(parallel=True, cache=True, error_model="numpy")
def _bias_gelu_with_slope_rows(x, bias, tanh_form, single):
    # x (R, C), bias (C,) -> y (R, C), slope (R, C) of z = x + bias. z is rounded to x's dtype first, as
    # the plain ops store it. One loop per form, so the float32 loop has no branch in it and vectorises.
    rows, cols = x.shape
    y = np.empty_like(x)
    slope = np.empty_like(x)
    for r in prange(rows):
        if single:
            for j in range(cols):
                y[r, j], slope[r, j] = _exact_gelu_and_slope_single(np.float32(x[r, j] + bias[j]))
        else:
            for j in range(cols):
                y[r, j], slope[r, j] = gelu_and_slope(np.float64(x[r, j] + bias[j]), tanh_form)
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


def bias_gelu_with_slope_numba(x, bias, approximate="none"):
    single = x.dtype == np.float32 and approximate == "none"
    y, slope = launch(_bias_gelu_with_slope_rows, x.size, as_rows(x), bias, approximate == "tanh", single)
    return y.reshape(x.shape), slope.reshape(x.shape)


def bias_gelu_backward_numba(grad_y, slope):
    rows = as_rows(slope)
    chunks = max(1, min(SUM_CHUNKS, rows.shape[0]))
    grad_x, partial_sums = launch(_times_slope_with_column_sums, slope.size, as_rows(grad_y), rows, chunks)
    return grad_x.reshape(slope.shape), partial_sums.sum(axis=0).astype(slope.dtype)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def _checked_x_and_bias(x, bias, approximate, op):
    """The form, x (..., C) as a float array and bias (C,) in x's dtype."""
    check_approximate(approximate, op)
    x = float_array(x, "x", op)
    nonempty_last_axis(x, "x", op)
    bias = np.ascontiguousarray(like(bias, x, "bias", op))
    if bias.shape != x.shape[-1:]:
        raise ShapeError(f"{op}: bias has shape {bias.shape}; it must be ({x.shape[-1]},), the last axis of x "
                         f"{x.shape}")
    return x, bias


def bias_gelu_with_slope(x, bias, approximate="none"):
    """(y, dy/dz) of y = gelu(z), z = x + bias (bias (C,) added to every row of x (..., C)), in one pass."""
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
