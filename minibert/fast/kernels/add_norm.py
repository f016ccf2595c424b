"""The end of every BERT sublayer in one kernel: y = LayerNorm(residual + Dropout(h)), "Add & Norm".

Google modeling.py `transformer_model` ends attention and the feed-forward alike with
`layer_norm(dropout(h) + residual)`; this computes it in one pass over memory, and its backward in one more:

    s = residual + h * (1/keep where kept, else 0)      y, mean, rstd = LayerNorm(s)
    grad_residual = grad_s (LayerNorm's backward)       grad_h = grad_s * (1/keep where kept, else 0)

Shapes: h, residual, s, y (..., H); weight, bias (H,); mean, rstd (...). The kernels see rows (R, H).
"""

import numpy as np
from numba import njit, prange

from minibert.fast.kernels.seeded_dropout import (
    KEEP_ALL,
    check_keep,
    check_seed,
    dropout_backward_numpy,
    dropout_forward_numpy,
    is_kept,
    keep_factors,
    uniforms_numpy,
)
from minibert.fast.threads import launch
from minibert.kernels.dispatch import as_rows, choose, float_array, like, nonempty_last_axis, same_shape
from minibert.kernels.layernorm import (
    GRAD_CHUNKS,
    check_backward_inputs,
    check_per_feature,
    layer_norm_backward_numpy,
    layer_norm_forward_numpy,
    normalise_row,
    normalise_row_backward,
)

# ---------------------------------------------------------------------------------------------------------
# Readable references: the three ops one after the other


def add_norm_forward_numpy(h, residual, seed, keep, weight, bias, eps):
    dropped, _ = dropout_forward_numpy(h, seed, keep)
    s = residual + dropped
    y, mean, rstd = layer_norm_forward_numpy(s, weight, bias, eps)
    return y, s, mean, rstd


def add_norm_backward_numpy(grad_y, s, weight, mean, rstd, seed, keep):
    grad_s, grad_weight, grad_bias = layer_norm_backward_numpy(grad_y, s, weight, mean, rstd)
    kept = (uniforms_numpy(seed, s.size) < keep).reshape(s.shape)  # the forward's draws, made again
    return dropout_backward_numpy(grad_s, kept, keep), grad_s, grad_weight, grad_bias


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: rows in parallel
#
# Why one kernel: done as three ops, dropout writes its output and a mask, the add reads both arrays and
# writes the sum, and LayerNorm reads the sum again: five passes over (B, S, H) arrays in the forward, and the
# backward makes its own passes for dropout's mask and gradient. Fused, the forward reads h and residual once
# and writes the sum s (which the backward needs) and y; the backward reads grad_y and s and writes grad_h and
# grad_residual. No mask is stored: dropout's draws are a function of the call's seed and the element's index
# (seeded_dropout.py), so the backward draws them again, and with the same seed the kernel keeps the same elements as
# `dropout_forward`. The LayerNorm rows run through layernorm.py's own row functions. The sum may differ from
# the three ops' in its last bit: LLVM computes residual + h * (1/keep) as one fused multiply-add, rounded
# once instead of twice. `bench/kernel_speed.py` times one call both ways ("add & norm" in docs/performance.md).

@njit(parallel=True, cache=True)
def _add_norm_rows(h, residual, seed, threshold, inverse, weight, bias, eps):
    # h, residual (R, H) -> y, s (R, H), mean, rstd (R,)
    rows, hidden = h.shape
    s = np.empty_like(h)
    y = np.empty_like(h)
    mean = np.empty(rows, dtype=h.dtype)
    rstd = np.empty(rows, dtype=h.dtype)
    zero = inverse * 0
    dropping = threshold < KEEP_ALL
    for r in prange(rows):
        for j in range(hidden):
            kept = not dropping or is_kept(seed, r * hidden + j, threshold)
            s[r, j] = residual[r, j] + h[r, j] * (inverse if kept else zero)
        mean[r], rstd[r] = normalise_row(s[r], weight, bias, eps, y[r])
    return y, s, mean, rstd


@njit(parallel=True, cache=True)
def _add_norm_backward_rows(grad_y, s, weight, mean, rstd, seed, threshold, inverse, chunks):
    # grad_y, s (R, H), weight (H,), mean, rstd (R,) -> grad_h, grad_s (R, H), and partial sums of grad_weight
    # and grad_bias, (chunks, H) each (a fixed number of chunks, as in layernorm.py: the same bits on any
    # number of threads)
    rows, hidden = s.shape
    grad_s = np.empty_like(s)
    grad_h = np.empty_like(s)
    partial_grad_weight = np.zeros((chunks, hidden))
    partial_grad_bias = np.zeros((chunks, hidden))
    zero = inverse * 0
    dropping = threshold < KEEP_ALL
    for c in prange(chunks):
        for r in range(c * rows // chunks, (c + 1) * rows // chunks):
            normalise_row_backward(grad_y[r], s[r], weight, mean[r], rstd[r], grad_s[r], partial_grad_weight[c],
                                   partial_grad_bias[c])
            for j in range(hidden):
                kept = not dropping or is_kept(seed, r * hidden + j, threshold)
                grad_h[r, j] = grad_s[r, j] * (inverse if kept else zero)
    return grad_h, grad_s, partial_grad_weight, partial_grad_bias


def add_norm_forward_numba(h, residual, seed, keep, weight, bias, eps):
    inverse, threshold = keep_factors(keep, h.dtype)
    y, s, mean, rstd = launch(_add_norm_rows, h.size, as_rows(h), as_rows(residual), seed, threshold, inverse[()],
                              weight, bias, float(eps))
    return y.reshape(h.shape), s.reshape(h.shape), mean.reshape(h.shape[:-1]), rstd.reshape(h.shape[:-1])


def add_norm_backward_numba(grad_y, s, weight, mean, rstd, seed, keep):
    inverse, threshold = keep_factors(keep, s.dtype)
    rows = as_rows(s)
    chunks = max(1, min(GRAD_CHUNKS, rows.shape[0]))
    grad_h, grad_s, partial_grad_weight, partial_grad_bias = launch(
        _add_norm_backward_rows, s.size, as_rows(grad_y), rows, weight, np.ascontiguousarray(mean).reshape(-1),
        np.ascontiguousarray(rstd).reshape(-1), seed, threshold, inverse[()], chunks)
    return (grad_h.reshape(s.shape), grad_s.reshape(s.shape), partial_grad_weight.sum(axis=0).astype(s.dtype),
            partial_grad_bias.sum(axis=0).astype(s.dtype))


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def add_norm_forward(h, residual, seed, keep, weight, bias, eps):
    """(y, s, mean, rstd): y = LayerNorm(s) with s = residual + dropout(h) (`seed` and `keep` as in
    dropout_forward; keep = 1 keeps everything). s, mean and rstd are what the backward needs."""
    op = "add_norm_forward"
    check_keep(keep, op)
    check_seed(seed, op)
    h = float_array(h, "h", op)
    residual = like(residual, h, "residual", op)
    same_shape(residual, "residual", h, "h", op)
    nonempty_last_axis(h, "h", op)
    weight, bias = check_per_feature(weight, "weight", h, op), check_per_feature(bias, "bias", h, op)
    return choose(add_norm_forward_numpy, add_norm_forward_numba)(h, residual, seed, keep, weight, bias, eps)


def add_norm_backward(grad_y, s, weight, mean, rstd, seed, keep):
    """(grad_h, grad_residual, grad_weight, grad_bias) from the forward's s, mean and rstd, its seed and keep.
    s is the x of LayerNorm's backward, and its checks name it so."""
    op = "add_norm_backward"
    check_keep(keep, op)
    check_seed(seed, op)
    grad_y, s, weight, mean, rstd = check_backward_inputs(grad_y, s, weight, mean, rstd, op)
    return choose(add_norm_backward_numpy, add_norm_backward_numba)(grad_y, s, weight, mean, rstd, seed, keep)
