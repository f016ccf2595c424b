"""Attention's weights in one kernel: dropout(softmax(scores * scale + mask)), and its backward.

In BERT's attention (Google modeling.py `attention_layer`) the scores q·kᵀ are scaled by 1/√D, masked,
turned into weights by a softmax over the keys, and the weights go through dropout before they average the
values. This does all of it in one pass over each row (the formulas are in the comment below).

Shapes: scores, probs, dropped (..., C), e.g. (B, A, S, S); mask broadcastable to them, e.g. (B, 1, 1, S).
"""

#     probs = softmax(scores * scale + mask)        dropped = probs * (1/keep where kept, else 0)
#     backward:  grad_probs = grad_dropped * (1/keep where kept, else 0)
#                grad_scores = scale * probs * (grad_probs - sum(grad_probs * probs))

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
from minibert.kernels.simd import VECTOR_SUMS
from minibert.kernels.softmax import (
    mask_rows,
    prepare_mask,
    softmax_backward_numpy,
    softmax_forward_numpy,
    softmax_row,
)

# ---------------------------------------------------------------------------------------------------------
# Readable references: the plain ops one after the other


def attention_weights_forward_numpy(scores, mask, scale, seed, keep):
    probs = softmax_forward_numpy(scores * scale, mask)
    dropped, _ = dropout_forward_numpy(probs, seed, keep)
    return probs, dropped


def attention_weights_backward_numpy(grad_dropped, probs, scale, seed, keep):
    kept = (uniforms_numpy(seed, probs.size) < keep).reshape(probs.shape)  # the forward's draws, made again
    grad_probs = dropout_backward_numpy(grad_dropped, kept, keep)
    return softmax_backward_numpy(grad_probs, probs) * scale


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: rows in parallel
#
# Why one kernel: as separate ops this is a scaling pass over q, the softmax's pass, and dropout's pass over
# the (B, A, S, S) weights, which writes a mask as well. Here one pass over each row writes the weights
# (`probs`, which the backward and attention maps need) and the dropped weights the values are averaged with.
# No mask is stored: the backward draws dropout's numbers again from the seed (seeded_dropout.py), and with the same
# seed the kernel keeps the same elements as `dropout_forward`; the softmax is softmax.py's own row function.
# Scaling the scores by 1/√D instead of q by 1/√D gives the same numbers when 1/√D is a power of two (D = 64
# in every BERT size) and differs only by rounding otherwise.

@njit(parallel=True, cache=True)
def _attention_weights_rows(scores, scale, mask_rows, mask_row_of, seed, threshold, inverse, single):
    # scores (R, C) -> probs, dropped (R, C)
    # With keep = 1 nothing is dropped, and `dropped` is `probs` itself rather than a copy.
    rows, cols = scores.shape
    dropping = threshold < KEEP_ALL
    probs = np.empty_like(scores)
    dropped = np.empty_like(scores) if dropping else probs
    zero = inverse * 0
    for r in prange(rows):
        for j in range(cols):
            probs[r, j] = scores[r, j] * scale  # the row scaled, then its softmax in place (softmax.py's own)
        softmax_row(probs[r], mask_rows[mask_row_of[r]], single, probs[r])
        if dropping:
            for j in range(cols):
                dropped[r, j] = probs[r, j] * (inverse if is_kept(seed, r * cols + j, threshold) else zero)
    return probs, dropped


@njit(parallel=True, cache=True, fastmath=VECTOR_SUMS)
def _attention_weights_backward_rows(grad_dropped, probs, scale, seed, threshold, inverse):
    # grad_dropped, probs (R, C) -> grad_scores (R, C). Values of ordinary size only, so VECTOR_SUMS is safe.
    rows, cols = probs.shape
    grad_scores = np.empty_like(probs)
    zero = inverse * 0
    dropping = threshold < KEEP_ALL
    for r in prange(rows):
        dot = 0.0
        for j in range(cols):
            kept = not dropping or is_kept(seed, r * cols + j, threshold)
            grad_probs = grad_dropped[r, j] * (inverse if kept else zero)
            grad_scores[r, j] = grad_probs  # held here until the row's dot product is known
            dot += grad_probs * probs[r, j]
        for j in range(cols):
            grad_scores[r, j] = probs[r, j] * (grad_scores[r, j] - dot) * scale
    return grad_scores


def attention_weights_forward_numba(scores, mask, scale, seed, keep):
    inverse, threshold = keep_factors(keep, scores.dtype)
    probs, dropped = launch(_attention_weights_rows, scores.size, as_rows(scores), scores.dtype.type(scale),
                            *mask_rows(mask, scores), seed, threshold, inverse[()], scores.dtype == np.float32)
    return probs.reshape(scores.shape), dropped.reshape(scores.shape)


def attention_weights_backward_numba(grad_dropped, probs, scale, seed, keep):
    inverse, threshold = keep_factors(keep, probs.dtype)
    grad_scores = launch(_attention_weights_backward_rows, probs.size, as_rows(grad_dropped), as_rows(probs),
                         probs.dtype.type(scale), seed, threshold, inverse[()])
    return grad_scores.reshape(probs.shape)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def attention_weights_forward(scores, mask, scale, seed, keep):
    """(probs, dropped): probs = softmax(scores * scale + mask) over the last axis (mask additive, as
    softmax_forward takes it, or None), dropped = dropout(probs) with `seed` and `keep` as dropout_forward
    takes them (keep = 1: dropped equals probs)."""
    op = "attention_weights_forward"
    check_keep(keep, op)
    check_seed(seed, op)
    scores = float_array(scores, "scores", op)
    nonempty_last_axis(scores, "scores", op)
    mask = prepare_mask(mask, scores, op)
    return choose(attention_weights_forward_numpy, attention_weights_forward_numba)(scores, mask, scale, seed,
                                                                                    keep)


def attention_weights_backward(grad_dropped, probs, scale, seed, keep):
    """grad_scores from the gradient of the dropped weights, the forward's probs, its scale, seed and keep."""
    op = "attention_weights_backward"
    check_keep(keep, op)
    check_seed(seed, op)
    probs = float_array(probs, "probs", op)
    nonempty_last_axis(probs, "probs", op)
    grad_dropped = like(grad_dropped, probs, "grad_dropped", op)
    same_shape(grad_dropped, "grad_dropped", probs, "probs", op)
    return choose(attention_weights_backward_numpy, attention_weights_backward_numba)(grad_dropped, probs, scale,
                                                                                      seed, keep)
