"""Softmax and log-softmax over the last axis, after adding a mask.

Attention turns scores into weights with softmax(scores + mask): BERT adds a large negative number to the
scores of padding keys so they get (almost) zero weight (Google modeling.py, `attention_layer`:
"adder = (1.0 - attention_mask) * -10000.0"). The mask here is that ADDITIVE form: 0 keeps an entry, a very
negative number drops it. It broadcasts to x, e.g. x (B, A, S, S) with mask (B, 1, 1, S).

Shapes: x (..., C), any leading shape; the kernels see it as rows (R, C), R = product of the leading axes.
Legend: B batch, A heads, S sequence length, C classes (the axis softmax runs over), R rows.
"""

import math

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.kernels.dispatch import as_rows, choose, float_array, like, nonempty_last_axis, same_shape
from minibert.kernels.simd import VECTOR_SUMS, fast_exp, fast_exp_single, vector_max


def prepare_mask(mask, x, op):
    """The additive mask in x's dtype, checked to broadcast to x.

    -inf (and anything below) is raised to the dtype's most negative finite value: a fully masked row would
    otherwise compute exp(-inf - (-inf)) = nan. This way such a row comes out uniform, and ordinary rows are
    unchanged, since exp(-huge) is 0 either way.
    """
    if mask is None:
        return None
    mask = float_array(mask, "mask", op)
    try:
        fits = np.broadcast_shapes(mask.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: mask of shape {mask.shape} does not broadcast to x of shape {x.shape}")
    return np.maximum(mask, np.finfo(x.dtype).min).astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)

def softmax_forward_numpy(x, mask=None):
    # BEGIN EXERCISE softmax_forward: add the mask, subtract each row's max, exponentiate, normalise over the last axis
    z = x if mask is None else x + mask  # (..., C)
    # softmax(z) = softmax(z - c) for any c; with c = the row max the largest term is exp(0) = 1: no overflow
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
    # END EXERCISE


def softmax_backward_numpy(grad_y, y):
    # y_i = exp(x_i) / sum_k exp(x_k)  =>  dy_i/dx_j = y_i (delta_ij - y_j)
    # BEGIN EXERCISE softmax_backward: contract y_i (delta_ij - y_j) with grad_y over the last axis
    # so grad_x_j = sum_i grad_y_i y_i (delta_ij - y_j) = y_j (grad_y_j - sum_i grad_y_i y_i)
    return y * (grad_y - (grad_y * y).sum(axis=-1, keepdims=True))
    # END EXERCISE


def log_softmax_forward_numpy(x, mask=None):
    z = x if mask is None else x + mask  # (..., C)
    z = z - z.max(axis=-1, keepdims=True)  # stable, as in softmax
    # log softmax(z)_i = z_i - log sum_k exp(z_k): never takes the log of an underflowed 0
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def log_softmax_backward_numpy(grad_y, y):
    # y_i = x_i - log sum_k exp(x_k)  =>  dy_i/dx_j = delta_ij - softmax_j, and softmax = exp(y)
    return grad_y - np.exp(y) * grad_y.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: one pass of work per row, rows in parallel

def mask_rows(mask, x):
    """Where each row of x finds its mask, without building the broadcast (..., C) mask.

    Returns mask_rows (M, 1 or C), the mask's own rows, and mask_row_of (R,): row r of x adds the row
    mask_rows[mask_row_of[r]], of C entries or of one entry for the whole row. For x (B, A, S, S) and mask
    (B, 1, 1, S), M = B and row r = ((b * A + a) * S + s) gets mask row b: R integers instead of a B*A*S*S
    copy of the mask.
    """
    if mask is None:
        mask = np.zeros((1,) * x.ndim, dtype=x.dtype)
    full_shape = (1,) * (x.ndim - mask.ndim) + mask.shape
    mask_rows = as_rows(mask.reshape(full_shape).astype(x.dtype, copy=False))  # (M, 1 or C)
    mask_row_ids = np.arange(mask_rows.shape[0], dtype=np.int64).reshape(full_shape[:-1])
    mask_row_of = np.broadcast_to(mask_row_ids, x.shape[:-1]).reshape(-1)  # (R,)
    return mask_rows, mask_row_of


# The row kernel is cut into one helper per pass over the row, each a plain loop LLVM can run in SIMD lanes.
# Written as one loop with an index step for the mask (0 for a one-entry mask row) and the exps, sum and max in
# separate passes, the same kernel ran markedly slower on attention's (B, A, S, S) scores.

@njit(cache=True)
def _add_mask(x_row, mask_row, z):
    """z = x_row + mask_row, the mask row having one entry per column or one for the whole row."""
    if len(mask_row) == 1:
        drop = mask_row[0]
        for j in range(len(z)):
            z[j] = x_row[j] + drop
    else:
        for j in range(len(z)):
            z[j] = x_row[j] + mask_row[j]


@njit(cache=True, fastmath=VECTOR_SUMS)
def _exp_in_place_and_sum(z, shift, single):
    """z = exp(z - shift), in place; returns sum(z) in float64, so no small term is lost.

    VECTOR_SUMS is safe here although z may hold masked entries near -3.4e38: the only additions it may
    regroup are those of the sum, whose terms lie in [0, 1]. single: float32 z, exps in float32 arithmetic
    (simd.py's fast_exp_single, twice the lanes), shifted by one of the row's own float32 values.
    """
    total = 0.0
    if single:
        shift_single = np.float32(shift)
        for j in range(len(z)):
            e = fast_exp_single(np.float32(z[j] - shift_single))
            z[j] = e
            total += e
    else:
        for j in range(len(z)):
            e = fast_exp(z[j] - shift)
            z[j] = e
            total += e
    return total


# No fastmath in the three row functions below: the mask can be -3.4e38, and the order of additions must stay
# as written.

@njit(cache=True)
def _shifted_exps(x_row, mask_row, single, z):
    """z = exp(x_row + mask_row - m), m the largest of x_row + mask_row; returns m and sum(z)."""
    _add_mask(x_row, mask_row, z)
    row_max = vector_max(z)
    return row_max, _exp_in_place_and_sum(z, row_max, single)


@njit(cache=True)
def softmax_row(x_row, mask_row, single, y_row):
    """y_row = softmax(x_row + mask_row) for one row (C,). y_row may be x_row itself: each entry is read
    before it is written."""
    _, total = _shifted_exps(x_row, mask_row, single, y_row)
    inverse_total = 1.0 / total
    for j in range(len(y_row)):
        y_row[j] = y_row[j] * inverse_total


@njit(cache=True)
def _log_softmax_row(x_row, mask_row, single, y_row):
    row_max, total = _shifted_exps(x_row, mask_row, single, y_row)
    # log softmax(z)_j = (z_j - row_max) - log total: recompute z rather than take the log of the exps.
    # Subtract row_max first: row_max + log(total) would lose log(total) when row_max is huge.
    _add_mask(x_row, mask_row, y_row)
    log_total = math.log(total)
    for j in range(len(y_row)):
        y_row[j] = (y_row[j] - np.float64(row_max)) - log_total


@njit(parallel=True, cache=True)
def _softmax_rows(x, mask_rows, mask_row_of, log, single):
    # x (R, C) -> y (R, C): softmax (or log-softmax if `log`) of each row of x + mask.
    # single: x is float32, so the exps are taken in float32 (simd.py's fast_exp_single, twice the lanes).
    y = np.empty_like(x)
    for r in prange(x.shape[0]):
        mask_row = mask_rows[mask_row_of[r]]
        if log:
            _log_softmax_row(x[r], mask_row, single, y[r])
        else:
            softmax_row(x[r], mask_row, single, y[r])
    return y


@njit(parallel=True, cache=True, fastmath=VECTOR_SUMS)
def _softmax_backward_rows(grad_y, y):
    # grad_x = y * (grad_y - sum(grad_y * y)), per row (see softmax_backward_numpy)
    rows, cols = y.shape
    grad_x = np.empty_like(y)
    for r in prange(rows):
        dot = 0.0
        for j in range(cols):
            dot += grad_y[r, j] * y[r, j]
        for j in range(cols):
            grad_x[r, j] = y[r, j] * (grad_y[r, j] - dot)
    return grad_x


@njit(parallel=True, cache=True, fastmath=VECTOR_SUMS)
def _log_softmax_backward_rows(grad_y, y):
    # grad_x = grad_y - exp(y) * sum(grad_y), per row (see log_softmax_backward_numpy)
    rows, cols = y.shape
    grad_x = np.empty_like(y)
    for r in prange(rows):
        total = 0.0
        for j in range(cols):
            total += grad_y[r, j]
        for j in range(cols):
            grad_x[r, j] = grad_y[r, j] - fast_exp(y[r, j]) * total
    return grad_x


def softmax_forward_numba(x, mask=None):
    return _softmax_rows(as_rows(x), *mask_rows(mask, x), False, x.dtype == np.float32).reshape(x.shape)


def softmax_backward_numba(grad_y, y):
    return _softmax_backward_rows(as_rows(grad_y), as_rows(y)).reshape(y.shape)


def log_softmax_forward_numba(x, mask=None):
    return _softmax_rows(as_rows(x), *mask_rows(mask, x), True, x.dtype == np.float32).reshape(x.shape)


def log_softmax_backward_numba(grad_y, y):
    return _log_softmax_backward_rows(as_rows(grad_y), as_rows(y)).reshape(y.shape)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers: check the input once, then run the chosen backend

def _forward(op, numpy_fn, numba_fn, x, mask):
    x = float_array(x, "x", op)
    nonempty_last_axis(x, "x", op)
    mask = prepare_mask(mask, x, op)
    return choose(numpy_fn, numba_fn)(x, mask)


def _backward(op, numpy_fn, numba_fn, grad_y, y):
    y = float_array(y, "y", op)
    grad_y = like(grad_y, y, "grad_y", op)
    same_shape(grad_y, "grad_y", y, "y", op)
    nonempty_last_axis(y, "y", op)
    return choose(numpy_fn, numba_fn)(grad_y, y)


def softmax_forward(x, mask=None):
    """y = softmax(x + mask) over the last axis. mask: None or additive (0 keep, very negative drop)."""
    return _forward("softmax_forward", softmax_forward_numpy, softmax_forward_numba, x, mask)


def softmax_backward(grad_y, y):
    """grad_x = y * (grad_y - sum(grad_y * y, last axis)), from the forward's output y."""
    return _backward("softmax_backward", softmax_backward_numpy, softmax_backward_numba, grad_y, y)


def log_softmax_forward(x, mask=None):
    """y = log(softmax(x + mask)) over the last axis, computed as z - logsumexp(z)."""
    return _forward("log_softmax_forward", log_softmax_forward_numpy, log_softmax_forward_numba, x, mask)


def log_softmax_backward(grad_y, y):
    """grad_x = grad_y - exp(y) * sum(grad_y, last axis), from the forward's output y."""
    return _backward("log_softmax_backward", log_softmax_backward_numpy, log_softmax_backward_numba,
                     grad_y, y)
