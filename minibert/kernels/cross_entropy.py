"""Softmax cross-entropy from logits and integer targets, the loss of BERT's MLM and NSP heads.

    nll_i = -log softmax(logits_i)[t_i] = logsumexp(logits_i) - logits_i[t_i]

Working from logits (never from probabilities) keeps it stable: logsumexp subtracts the row max first, so
logits of +-1e4 give finite losses. Weights and ignored positions are the caller's business.

Shapes: logits (N, C), targets (N,), nll and logsumexp (N,).
Legend: N rows (e.g. B*P masked positions), C classes (e.g. V the vocabulary).
"""

# The caller passes grad_nll = weight / sum(weights) (0 for ignored rows) to the backward, and only valid
# targets.

import math

import numpy as np
from numba import njit, prange

from minibert.errors import ShapeError
from minibert.kernels.dispatch import DtypeError, choose, float_array, like, nonempty_last_axis
from minibert.kernels.simd import VECTOR_SUMS, fast_exp, fast_exp_single, vector_max

# ---------------------------------------------------------------------------------------------------------
# Readable references (vectorised NumPy)


def softmax_cross_entropy_forward_numpy(logits, targets):
    # BEGIN EXERCISE cross_entropy_forward: logsumexp of each row (max subtracted first), minus the target's logit
    row_max = logits.max(axis=-1, keepdims=True)  # (N, 1)
    logsumexp = (row_max + np.log(np.exp(logits - row_max).sum(axis=-1, keepdims=True)))[:, 0]  # (N,)
    nll = logsumexp - logits[np.arange(len(targets)), targets]  # (N,)
    return nll, logsumexp
    # END EXERCISE


def softmax_cross_entropy_backward_numpy(grad_nll, logits, targets, logsumexp):
    # BEGIN EXERCISE cross_entropy_backward: (softmax(z) - onehot(t)) times each row's grad_nll
    # nll = logsumexp(z) - z[t]  =>  d nll / dz_j = softmax(z)_j - [j == t]
    # and softmax(z) = exp(z - logsumexp(z))
    grad_logits = np.exp(logits - logsumexp[:, None])  # (N, C)
    grad_logits[np.arange(len(targets)), targets] -= 1.0
    return grad_logits * grad_nll[:, None]
    # END EXERCISE


# ---------------------------------------------------------------------------------------------------------
# Numba kernels: rows in parallel, sums in float64

@njit(parallel=True, cache=True, fastmath=VECTOR_SUMS)
def _cross_entropy_rows(logits, targets, single):
    # logits (N, C), targets (N,) -> nll (N,), logsumexp (N,). single: float32 logits, exps in float32.
    rows, classes = logits.shape
    nll = np.empty(rows, dtype=logits.dtype)
    logsumexp = np.empty(rows, dtype=logits.dtype)
    for r in prange(rows):
        row_max = np.float64(vector_max(logits[r]))
        total = 0.0
        if single:
            shift = np.float32(row_max)
            for j in range(classes):
                total += fast_exp_single(np.float32(logits[r, j] - shift))
        else:
            for j in range(classes):
                total += fast_exp(logits[r, j] - row_max)
        row_logsumexp = row_max + math.log(total)
        logsumexp[r] = row_logsumexp
        nll[r] = row_logsumexp - logits[r, targets[r]]
    return nll, logsumexp


@njit(parallel=True, cache=True)
def _cross_entropy_backward_rows(grad_nll, logits, targets, logsumexp, single):
    # grad_nll (N,), logits (N, C), targets (N,), logsumexp (N,) -> grad_logits (N, C)
    rows, classes = logits.shape
    grad_logits = np.empty_like(logits)
    for r in prange(rows):
        g = np.float64(grad_nll[r])
        shift = np.float64(logsumexp[r])
        if single:
            g_single, shift_single = np.float32(g), np.float32(shift)
            for j in range(classes):
                grad_logits[r, j] = fast_exp_single(np.float32(logits[r, j] - shift_single)) * g_single
        else:
            for j in range(classes):
                grad_logits[r, j] = fast_exp(logits[r, j] - shift) * g
        grad_logits[r, targets[r]] -= g
    return grad_logits


def softmax_cross_entropy_forward_numba(logits, targets):
    return _cross_entropy_rows(np.ascontiguousarray(logits), targets, logits.dtype == np.float32)


def softmax_cross_entropy_backward_numba(grad_nll, logits, targets, logsumexp):
    return _cross_entropy_backward_rows(np.ascontiguousarray(grad_nll), np.ascontiguousarray(logits), targets,
                                        np.ascontiguousarray(logsumexp), logits.dtype == np.float32)


# ---------------------------------------------------------------------------------------------------------
# Dispatchers

def _checked_targets(targets, logits, op):
    """targets as a contiguous int64 (N,) array of class ids in [0, C), or a clear error."""
    targets = np.asarray(targets)
    if not np.issubdtype(targets.dtype, np.integer):
        raise DtypeError(f"{op}: targets have dtype {targets.dtype}; they must be integer class ids")
    if logits.ndim != 2 or targets.shape != logits.shape[:1]:
        raise ShapeError(f"{op}: logits {logits.shape} and targets {targets.shape} must be (N, C) and (N,)")
    if targets.size and (targets.min() < 0 or targets.max() >= logits.shape[1]):
        raise ValueError(f"{op}: targets range over [{targets.min()}, {targets.max()}] but must lie in "
                         f"[0, {logits.shape[1]}) for {logits.shape[1]} classes; drop ignored positions "
                         "(e.g. -100) or replace them with 0 and give them zero weight")
    return np.ascontiguousarray(targets, dtype=np.int64)


def _rows_vector(v, name, logits, op):
    v = like(v, logits, name, op)
    if v.shape != logits.shape[:1]:
        raise ShapeError(f"{op}: {name} has shape {v.shape}; it must be ({logits.shape[0]},), one per row")
    return v


def softmax_cross_entropy_forward(logits, targets):
    """Per-row loss nll = logsumexp(logits) - logits[target], and logsumexp (saved for the backward)."""
    op = "softmax_cross_entropy_forward"
    logits = float_array(logits, "logits", op)
    nonempty_last_axis(logits, "logits", op)
    targets = _checked_targets(targets, logits, op)
    fn = choose(softmax_cross_entropy_forward_numpy,
                softmax_cross_entropy_forward_numba)
    return fn(logits, targets)


def softmax_cross_entropy_backward(grad_nll, logits, targets, logsumexp):
    """grad_logits = (softmax(logits) - onehot(targets)) * grad_nll[:, None]."""
    op = "softmax_cross_entropy_backward"
    logits = float_array(logits, "logits", op)
    nonempty_last_axis(logits, "logits", op)
    targets = _checked_targets(targets, logits, op)
    grad_nll = _rows_vector(grad_nll, "grad_nll", logits, op)
    logsumexp = _rows_vector(logsumexp, "logsumexp", logits, op)
    fn = choose(softmax_cross_entropy_backward_numpy,
                softmax_cross_entropy_backward_numba)
    return fn(grad_nll, logits, targets, logsumexp)
