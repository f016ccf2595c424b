"""Layer normalisation over the last axis (Ba, Kiros & Hinton 2016), as in every BERT sub-layer.

    mean = mean(x),  var = mean((x - mean)^2)  (biased, as BERT and PyTorch),  rstd = 1 / sqrt(var + eps)
    y = (x - mean) * rstd * weight + bias

The forward returns mean and rstd as well, so the backward need not recompute them.

Shapes: x, y (..., H); weight, bias (H,); mean, rstd (...). The kernels see x as rows (R, H).
Legend: H hidden size (the normalised axis), R rows = product of the leading axes.
"""

# llm.c's `layernorm_forward` / `layernorm_backward` pair works the same way (mean and rstd saved).

import math

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.kernels.dispatch import as_rows, choose, float_array, like, nonempty_last_axis, same_shape
from minibert.kernels.simd import VECTOR_SUMS

# The backward sums grad_weight and grad_bias over rows. Each of a fixed number of row chunks keeps its own
# float64 partial sums (no two threads write the same memory), then the partials are added. The count does
# not depend on the number of threads, so the result is the same on every machine.
GRAD_CHUNKS = 64


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def layer_norm_forward_numpy(x, weight, bias, eps):
    # BEGIN EXERCISE layer_norm_forward: (x - mean)/√(var + eps)·weight + bias per row; also return mean and rstd
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centered = x - mean  # (..., H)
    var = (centered * centered).mean(axis=-1, keepdims=True)  # (..., 1); two passes: no cancellation
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    y = centered * rstd * weight + bias  # (..., H)
    return y, mean[..., 0], rstd[..., 0]
    # END EXERCISE


def layer_norm_backward_numpy(grad_y, x, weight, mean, rstd):
    # BEGIN EXERCISE layer_norm_backward: y = x_hat·weight + bias; mean and rstd depend on the whole row
    hidden = x.shape[-1]
    mean, rstd = mean[..., None], rstd[..., None]  # (..., 1)
    x_hat = (x - mean) * rstd  # (..., H), the normalised input
    # y = x_hat * weight + bias
    grad_weight = (grad_y * x_hat).reshape(-1, hidden).sum(axis=0)  # (H,)
    grad_bias = grad_y.reshape(-1, hidden).sum(axis=0)  # (H,)
    grad_x_hat = grad_y * weight  # (..., H)
    # x_hat = (x - mean) * rstd, and mean and rstd depend on every x of the row. Working it through:
    # grad_x = rstd * (grad_x_hat - mean(grad_x_hat) - x_hat * mean(grad_x_hat * x_hat))
    grad_x = rstd * (grad_x_hat - grad_x_hat.mean(axis=-1, keepdims=True)
                     - x_hat * (grad_x_hat * x_hat).mean(axis=-1, keepdims=True))
    return grad_x, grad_weight, grad_bias
    # END EXERCISE


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: rows in parallel, sums in float64

@njit(cache=True, fastmath=VECTOR_SUMS)
def normalise_row(x_row, weight, bias, eps, y_row):
    """y_row = LayerNorm(x_row) for one row (H,); returns the row's mean and rstd (float64)."""
    hidden = len(x_row)
    total = 0.0
    for j in range(hidden):
        total += x_row[j]
    row_mean = total / hidden
    squares = 0.0
    for j in range(hidden):
        d = x_row[j] - row_mean
        squares += d * d
    row_rstd = 1.0 / math.sqrt(squares / hidden + eps)
    for j in range(hidden):
        y_row[j] = (x_row[j] - row_mean) * row_rstd * weight[j] + bias[j]
    return row_mean, row_rstd


@njit(cache=True, fastmath=VECTOR_SUMS)
def normalise_row_backward(grad_y_row, x_row, weight, row_mean, row_rstd, grad_x_row, grad_weight_sum,
                           grad_bias_sum):
    """grad_x_row for one row (see layer_norm_backward_numpy), and the row's terms of grad_weight and
    grad_bias added into the float64 sums grad_weight_sum and grad_bias_sum (H,)."""
    hidden = len(x_row)
    row_mean, row_rstd = np.float64(row_mean), np.float64(row_rstd)
    sum_grad_x_hat = 0.0
    sum_grad_x_hat_x_hat = 0.0
    for j in range(hidden):
        x_hat = (x_row[j] - row_mean) * row_rstd
        grad_x_hat = np.float64(grad_y_row[j]) * weight[j]
        sum_grad_x_hat += grad_x_hat
        sum_grad_x_hat_x_hat += grad_x_hat * x_hat
        grad_weight_sum[j] += grad_y_row[j] * x_hat
        grad_bias_sum[j] += grad_y_row[j]
    mean_grad_x_hat = sum_grad_x_hat / hidden
    mean_grad_x_hat_x_hat = sum_grad_x_hat_x_hat / hidden
    for j in range(hidden):
        x_hat = (x_row[j] - row_mean) * row_rstd
        grad_x_hat = np.float64(grad_y_row[j]) * weight[j]
        grad_x_row[j] = row_rstd * (grad_x_hat - mean_grad_x_hat - x_hat * mean_grad_x_hat_x_hat)


@njit(parallel=True, cache=True)
def _layer_norm_rows(x, weight, bias, eps):
    # x (R, H), weight, bias (H,) -> y (R, H), mean (R,), rstd (R,)
    rows = x.shape[0]
    y = np.empty_like(x)
    mean = np.empty(rows, dtype=x.dtype)
    rstd = np.empty(rows, dtype=x.dtype)
    for r in prange(rows):
        mean[r], rstd[r] = normalise_row(x[r], weight, bias, eps, y[r])
    return y, mean, rstd


@njit(parallel=True, cache=True)
def _layer_norm_backward_rows(grad_y, x, weight, mean, rstd, chunks):
    # grad_y, x (R, H), weight (H,), mean, rstd (R,)
    #   -> grad_x (R, H), and partial sums of grad_weight and grad_bias, (chunks, H) each
    rows, hidden = x.shape
    grad_x = np.empty_like(x)
    partial_grad_weight = np.zeros((chunks, hidden))
    partial_grad_bias = np.zeros((chunks, hidden))
    for c in prange(chunks):
        for r in range(c * rows // chunks, (c + 1) * rows // chunks):
            normalise_row_backward(grad_y[r], x[r], weight, mean[r], rstd[r], grad_x[r], partial_grad_weight[c],
                                   partial_grad_bias[c])
    return grad_x, partial_grad_weight, partial_grad_bias


def layer_norm_forward_numba(x, weight, bias, eps):
    y, mean, rstd = _layer_norm_rows(as_rows(x), weight, bias, float(eps))
    return y.reshape(x.shape), mean.reshape(x.shape[:-1]), rstd.reshape(x.shape[:-1])


def layer_norm_backward_numba(grad_y, x, weight, mean, rstd):
    rows = as_rows(x)
    chunks = max(1, min(GRAD_CHUNKS, rows.shape[0]))
    grad_x, partial_grad_weight, partial_grad_bias = _layer_norm_backward_rows(
        as_rows(grad_y), rows, weight, np.ascontiguousarray(mean).reshape(-1), np.ascontiguousarray(rstd).reshape(-1),
        chunks)
    dtype = x.dtype
    return (grad_x.reshape(x.shape), partial_grad_weight.sum(axis=0).astype(dtype),
            partial_grad_bias.sum(axis=0).astype(dtype))


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def check_per_feature(v, name, x, op):
    """weight or bias as a contiguous (H,) array in x's dtype; any other shape is refused."""
    v = np.ascontiguousarray(like(v, x, name, op))
    if v.shape != x.shape[-1:]:
        raise ShapeError(f"{op}: {name} has shape {v.shape}; it must be ({x.shape[-1]},), the last axis "
                         f"of x {x.shape}")
    return v


def check_backward_inputs(grad_y, x, weight, mean, rstd, op):
    """A LayerNorm backward's inputs, checked and in x's dtype: grad_y of x's shape, weight (H,), and the
    forward's saved mean and rstd, one per row of x (x: the array LayerNorm normalised)."""
    x = float_array(x, "x", op)
    grad_y = like(grad_y, x, "grad_y", op)
    same_shape(grad_y, "grad_y", x, "x", op)
    nonempty_last_axis(x, "x", op)
    weight = check_per_feature(weight, "weight", x, op)
    mean, rstd = like(mean, x, "mean", op), like(rstd, x, "rstd", op)
    for name, saved in (("mean", mean), ("rstd", rstd)):
        if saved.shape != x.shape[:-1]:
            raise ShapeError(f"{op}: {name} has shape {saved.shape}; the forward returned {x.shape[:-1]}")
    return grad_y, x, weight, mean, rstd


def layer_norm_forward(x, weight, bias, eps):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last axis; returns (y, mean, rstd)."""
    op = "layer_norm_forward"
    x = float_array(x, "x", op)
    nonempty_last_axis(x, "x", op)
    weight, bias = check_per_feature(weight, "weight", x, op), check_per_feature(bias, "bias", x, op)
    return choose(layer_norm_forward_numpy, layer_norm_forward_numba)(
        x, weight, bias, eps)


def layer_norm_backward(grad_y, x, weight, mean, rstd):
    """(grad_x, grad_weight, grad_bias) from the forward's input x, weight, and its saved mean and rstd."""
    grad_y, x, weight, mean, rstd = check_backward_inputs(grad_y, x, weight, mean, rstd, "layer_norm_backward")
    return choose(layer_norm_backward_numpy, layer_norm_backward_numba)(
        grad_y, x, weight, mean, rstd)
