"""The neural-network ops BERT is made of, imported as `F` (`from minibert import functional as F`).

Each is a `Function` whose forward and backward call a kernel from `minibert/kernels/`: a Numba kernel or
its plain-NumPy reference, chosen by `minibert.set_backend`. The kernels work on arrays; this module wires
them into the graph.
"""

import math

import numpy as np

from minibert import kernels
from minibert.autograd.tensor import Function, Tensor, is_grad_enabled, unbroadcast
from minibert.errors import ShapeError

GELU_FORMS = ("none", "tanh")


class Linear(Function):
    """y = x·Wᵀ + b as one op: the same numbers as `x @ weight.T + bias`, in fewer passes over memory.

    The leading axes of x are folded into rows, so one BLAS call does the whole batch; the bias is added in
    place into the matmul's fresh output rather than into a third array; and the backward hands BLAS the
    transposed views directly, so no operand is copied.
    """

    def forward(self, x, weight, bias=None):
        rows = x.reshape(-1, x.shape[-1])  # (N, in), N = product of the leading axes
        y = kernels.matmul_forward(rows, weight.T)  # (N, in) @ (in, out) -> (N, out)
        if bias is not None:
            y += bias
        self.rows, self.weight, self.x_shape = rows, weight, x.shape
        return y.reshape(*x.shape[:-1], weight.shape[0])

    def backward(self, grad_output):
        # y = x Wᵀ + b  ->  dx = dy W,  dW = dyᵀ x,  db = dy summed over rows
        grad_rows = grad_output.reshape(-1, self.weight.shape[0])  # (N, out)
        grad_x = grad_weight = grad_bias = None
        # dx: (N, out) @ (out, in) -> (N, in);  dW: (out, N) @ (N, in) -> (out, in)
        if self.needs_grad[0] and self.needs_grad[1]:  # both at once, each on its own core
            grad_x, grad_weight = kernels.matmul_pair(grad_rows, self.weight, grad_rows.T, self.rows)
        elif self.needs_grad[0]:
            grad_x = kernels.matmul_forward(grad_rows, self.weight)
        elif self.needs_grad[1]:
            grad_weight = kernels.matmul_forward(grad_rows.T, self.rows)
        if grad_x is not None:
            grad_x = grad_x.reshape(self.x_shape)
        has_bias = len(self.needs_grad) == 3
        if has_bias and self.needs_grad[2]:
            grad_bias = grad_rows.sum(axis=0)  # (out,)
        return (grad_x, grad_weight, grad_bias) if has_bias else (grad_x, grad_weight)


def linear(x, weight, bias=None):
    """x·Wᵀ + b for x (..., in), weight (out, in) as PyTorch and HF store it, bias (out,) or None."""
    if weight.shape[-1] != x.shape[-1]:
        raise ShapeError(f"linear: x has {x.shape[-1]} features (shape {x.shape}) but the weight "
                         f"{weight.shape} takes {weight.shape[-1]}")
    return Linear.apply(x, weight) if bias is None else Linear.apply(x, weight, bias)


class GELU(Function):
    def forward(self, x, approximate="none"):
        if approximate not in GELU_FORMS:
            raise ValueError(f"gelu approximate={approximate!r}; use 'none' (exact erf form) or 'tanh'")
        if not (is_grad_enabled() and self.needs_grad[0]):
            return kernels.gelu_forward(x, approximate)
        # y = x Φ(x) and dy/dx = Φ(x) + x φ(x) share Φ(x), the costly part: compute both now and keep the
        # slope instead of x (the same memory), so the backward is one multiplication.
        y, self.slope = kernels.gelu_with_slope(x, approximate)
        return y

    def backward(self, grad_output):
        return grad_output * self.slope


def gelu(x, approximate="none"):
    """GELU(x) = x·Φ(x) (Hendrycks & Gimpel 2016), BERT's activation. "none" is the exact erf form of the paper
    and HF's `gelu`; "tanh" is the approximation Google's code later used (HF's `gelu_new`)."""
    return GELU.apply(x, approximate=approximate)


class BiasGELU(Function):
    def forward(self, x, bias, approximate="none"):
        if approximate not in GELU_FORMS:
            raise ValueError(f"bias_gelu approximate={approximate!r}; use 'none' (exact erf form) or 'tanh'")
        if not (is_grad_enabled() and any(self.needs_grad)):
            return kernels.gelu_forward(x + bias, approximate)
        y, self.slope = kernels.bias_gelu_with_slope(x, bias, approximate)  # as GELU: keep dy/dz, not x
        return y

    def backward(self, grad_output):
        return kernels.bias_gelu_backward(grad_output, self.slope)  # (grad_x, grad_bias)


def bias_gelu(x, bias, approximate="none"):
    """gelu(x + bias) as one op: the feed-forward's first Linear without its bias add, then GELU (see
    kernels/gelu.py `bias_gelu_with_slope`); the same numbers as `gelu(x + bias)`, one pass fewer each way."""
    if bias.shape != x.shape[-1:]:
        raise ShapeError(f"bias_gelu: bias has shape {bias.shape}; it must be ({x.shape[-1]},), the last axis of "
                         f"x {x.shape}")
    return BiasGELU.apply(x, bias, approximate=approximate)


def additive_mask(mask, dtype):
    """Turn a mask into the additive form the softmax kernel takes: 0 where a position is kept, the dtype's most
    negative finite number where it is dropped (as HF does; Google used -10000). A boolean mask is True (or 1)
    for kept positions; a float mask is already additive."""
    mask = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if mask.dtype == np.bool_:
        return np.where(mask, 0, np.finfo(dtype).min).astype(dtype)
    return mask.astype(dtype, copy=False)


def _check_mask(shape, mask):
    try:
        np.broadcast_shapes(np.shape(mask), shape)
    except ValueError:
        raise ShapeError(f"softmax mask of shape {np.shape(mask)} does not broadcast to scores of shape "
                         f"{shape}") from None


class Softmax(Function):
    def forward(self, x, mask=None):
        self.y = kernels.softmax_forward(x, mask)
        return self.y

    def backward(self, grad_output):
        return kernels.softmax_backward(grad_output, self.y)


class LogSoftmax(Function):
    def forward(self, x, mask=None):
        self.y = kernels.log_softmax_forward(x, mask)
        return self.y

    def backward(self, grad_output):
        return kernels.log_softmax_backward(grad_output, self.y)


def _softmax_op(op, x, axis, mask):
    if mask is not None:
        _check_mask(x.shape, mask)
        mask = additive_mask(mask, x.dtype)
    if axis in (-1, x.ndim - 1):
        return op.apply(x, mask=mask)
    # The kernels work over the last axis: move `axis` there and back.
    x_last = x.transpose(_swap_last(x.ndim, axis))
    mask_last = None if mask is None else np.swapaxes(np.broadcast_to(mask, x.shape), axis, -1)
    return op.apply(x_last, mask=mask_last).transpose(_swap_last(x.ndim, axis))


def _swap_last(ndim, axis):
    axes = list(range(ndim))
    axes[axis], axes[-1] = axes[-1], axes[axis]
    return tuple(axes)


def softmax(x, axis=-1, mask=None):
    """exp(x) / sum(exp(x)) along `axis`. `mask` is boolean (True = keep) or additive, broadcastable to x;
    masked entries get probability 0."""
    return _softmax_op(Softmax, x, axis, mask)


def log_softmax(x, axis=-1, mask=None):
    """log(softmax(x)), computed stably as x - logsumexp(x)."""
    return _softmax_op(LogSoftmax, x, axis, mask)


class SelfAttention(Function):
    """softmax(q·kᵀ/√D + mask)·v with dropout on the weights, all heads at once, for q, k and v side by side in
    one (B, S, 3H) array: what `MultiHeadSelfAttention.forward` computes with its plain ops, as one.

    The heads are strided views of that array, (B, S, 3, A, D) -> (3, B, A, S, D), which BLAS reads as they
    are. The context is written by BLAS straight into (B, S, A, D) order, so the heads stand side by side
    without a copy; the backward writes q's, k's and v's gradients into one (B, S, 3H) array the same way.
    """

    def forward(self, qkv, num_heads, mask, p, rng):
        batch, seq_len, width = qkv.shape
        head_size = width // (3 * num_heads)
        self.heads = qkv.reshape(batch, seq_len, 3, num_heads, head_size).transpose(2, 0, 3, 1, 4)
        q, k, v = self.heads  # (B, A, S, D) each, views
        self.scale = 1.0 / math.sqrt(head_size)
        self.keep = 1.0 - p
        self.seed = kernels.draw_seed(rng) if p > 0 else np.uint64(0)  # where dropout(probs) draws it
        scores = kernels.matmul_forward(q, k.swapaxes(-1, -2))  # (B, A, S, S)
        self.probs, self.dropped = kernels.attention_weights_forward(scores, mask, self.scale, self.seed, self.keep)
        context = np.empty((batch, seq_len, num_heads, head_size), dtype=qkv.dtype)
        kernels.matmul_forward(self.dropped, v, out=context.transpose(0, 2, 1, 3))  # (B, A, S, D) view
        return context.reshape(batch, seq_len, num_heads * head_size), self.probs  # probs: a side array

    def backward(self, grad_output):
        q, k, v = self.heads
        batch, num_heads, seq_len, head_size = q.shape
        grad_context = grad_output.reshape(batch, seq_len, num_heads, head_size).transpose(0, 2, 1, 3)
        grad_qkv = np.empty((batch, seq_len, 3, num_heads, head_size), dtype=grad_output.dtype)
        grad_q, grad_k, grad_v = grad_qkv.transpose(2, 0, 3, 1, 4)  # views to write into
        # context = dropped @ v  ->  grad_dropped = grad_context @ vᵀ,  grad_v = droppedᵀ @ grad_context
        grad_dropped, _ = kernels.matmul_pair(grad_context, v.swapaxes(-1, -2), self.dropped.swapaxes(-1, -2),
                                              grad_context, out2=grad_v)
        grad_scores = kernels.attention_weights_backward(grad_dropped, self.probs, self.scale, self.seed, self.keep)
        # scores = q @ kᵀ  ->  grad_q = grad_scores @ k,  grad_k = grad_scoresᵀ @ q
        kernels.matmul_pair(grad_scores, k, grad_scores.swapaxes(-1, -2), q, out1=grad_q, out2=grad_k)
        return grad_qkv.reshape(batch, seq_len, 3 * num_heads * head_size)


def self_attention(qkv, num_heads, mask, p, training, rng=None):
    """Multi-head self-attention from q, k and v side by side, qkv (B, S, 3H) (e.g. one Linear with the three
    projections' weights stacked), as one op: returns the context (B, S, H), a Tensor, and the attention
    weights (B, A, S, S) before dropout, an array (for attention maps; no gradient flows through them).

    `mask`: boolean (True = may attend) or additive, broadcastable to (B, A, S, S). Dropout with probability
    p on the weights while training, as BERT (Google modeling.py `attention_layer`). The same numbers as the
    plain ops of `MultiHeadSelfAttention.forward` (up to rounding when 1/√D is not a power of two)."""
    width = qkv.shape[-1]
    if qkv.ndim != 3 or width % (3 * num_heads):
        raise ShapeError(f"self_attention: qkv has shape {qkv.shape}; it must be (B, S, 3H) with H a multiple of "
                         f"num_heads={num_heads}")
    _check_dropout(p, training, rng)
    batch, seq_len, _ = qkv.shape
    if mask is not None:
        _check_mask((batch, num_heads, seq_len, seq_len), mask)
        mask = additive_mask(mask, qkv.dtype)
    return SelfAttention.apply(qkv, num_heads=num_heads, mask=mask, p=p if training else 0.0, rng=rng)


class LayerNorm(Function):
    def forward(self, x, weight, bias, eps=1e-12):
        if weight.shape != x.shape[-1:] or bias.shape != x.shape[-1:]:
            raise ShapeError(f"layer_norm: weight {weight.shape} and bias {bias.shape} must both be "
                             f"({x.shape[-1]},), the last dimension of x {x.shape}")
        y, self.mean, self.rstd = kernels.layer_norm_forward(x, weight, bias, eps)
        self.x, self.weight = x, weight
        return y

    def backward(self, grad_output):
        return kernels.layer_norm_backward(grad_output, self.x, self.weight, self.mean, self.rstd)


def layer_norm(x, weight, bias, eps=1e-12):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (Ba et al. 2016), fused in one kernel."""
    return LayerNorm.apply(x, weight, bias, eps=eps)


class Dropout(Function):
    def forward(self, x, p, rng):
        # Inverted dropout: scale the kept values by 1/keep now, so eval mode needs no rescaling.
        self.keep = 1.0 - p
        y, self.kept = kernels.dropout_forward(x, kernels.draw_seed(rng), self.keep)
        return y

    def backward(self, grad_output):
        # out = x * (1/keep or 0)  ->  d/dx = 1/keep for kept units, 0 for dropped ones
        return kernels.dropout_backward(grad_output, self.kept, self.keep)


def dropout(x, p, training, rng=None):
    """Zero each element with probability p while training (Srivastava et al. 2014); the identity in eval mode
    or when p = 0. Reproducible given a `numpy.random.Generator`."""
    _check_dropout(p, training, rng)
    if not training or p == 0.0:
        return x
    return Dropout.apply(x, p=p, rng=rng)


def _check_dropout(p, training, rng):
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability p={p} must be in [0, 1)")
    if training and p > 0.0 and rng is None:
        raise ValueError("dropout in training mode needs rng=numpy.random.default_rng(seed), so runs are reproducible")


class AddNorm(Function):
    def forward(self, h, residual, weight, bias, eps, p, rng):
        self.keep = 1.0 - p
        self.seed = kernels.draw_seed(rng) if p > 0 else np.uint64(0)  # one draw, where dropout(h) makes it
        y, self.s, self.mean, self.rstd = kernels.add_norm_forward(h, residual, self.seed, self.keep, weight, bias,
                                                                   eps)
        self.weight = weight
        return y

    def backward(self, grad_output):
        # s = residual + dropout(h), y = LayerNorm(s): LayerNorm's backward gives grad_s, which is the residual's
        # gradient; h's is grad_s scaled as dropout's backward does (the mask drawn again from the seed)
        return kernels.add_norm_backward(grad_output, self.s, self.weight, self.mean, self.rstd, self.seed, self.keep)


def dropout_add_layer_norm(h, residual, weight, bias, eps, p, training, rng=None):
    """layer_norm(residual + dropout(h, p, training, rng), weight, bias, eps) as one op, "Add & Norm", the end
    of every BERT sublayer: the same numbers (up to rounding, see kernels/add_norm.py) in one pass over memory
    instead of three, and no dropout mask kept for the backward."""
    _check_dropout(p, training, rng)
    return AddNorm.apply(h, residual, weight, bias, eps=eps, p=p if training else 0.0, rng=rng)


class Where(Function):
    def forward(self, condition, a, b):
        self.condition = condition.astype(bool)
        self.a_shape, self.b_shape = a.shape, b.shape
        return np.where(self.condition, a, b)

    def backward(self, grad_output):
        # out = a where condition else b  ->  the gradient goes to whichever side was chosen
        zero = np.zeros((), dtype=grad_output.dtype)
        return (None, unbroadcast(np.where(self.condition, grad_output, zero), self.a_shape),
                unbroadcast(np.where(self.condition, zero, grad_output), self.b_shape))


def where(condition, a, b):
    """`np.where` with gradients flowing to `a` and `b`; `condition` carries none."""
    condition = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    return Where.apply(condition, a, b)


def masked_fill(x, mask, value):
    """x with `value` wherever `mask` is True (`torch.masked_fill`)."""
    return where(mask, value, x)


class Embedding(Function):
    def forward(self, ids, weight):
        if not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"embedding ids must be integers, got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
            bad = ids[(ids < 0) | (ids >= weight.shape[0])].ravel()[0]
            raise ShapeError(f"id {bad} is outside the embedding table of {weight.shape[0]} rows "
                             f"(valid ids are 0..{weight.shape[0] - 1})")
        self.ids, self.weight_shape = ids, weight.shape
        return weight[ids]  # (..., H)

    def backward(self, grad_output):
        # out = weight[ids]  ->  each row of weight gets the sum of the gradients at the places its id appears
        grad_weight = kernels.scatter_add_rows(self.ids, grad_output.reshape(-1, self.weight_shape[1]),
                                               self.weight_shape[0])  # (V, H)
        return None, grad_weight


def embedding(ids, weight):
    """Look up one row of `weight` (V, H) per id: out[..., :] = weight[ids[...]]."""
    ids = ids.data if isinstance(ids, Tensor) else np.asarray(ids)
    return Embedding.apply(ids, weight)


class CrossEntropy(Function):
    def forward(self, logits, targets, weights, denominator):
        rows = logits.reshape(-1, logits.shape[-1])  # (N, C)
        self.logits_shape = logits.shape
        self.rows, self.targets = rows, targets.reshape(-1)
        nll, self.logsumexp = kernels.softmax_cross_entropy_forward(rows, self.targets)  # (N,)
        self.weights = (weights.reshape(-1) / denominator).astype(logits.dtype)  # (N,)
        return np.asarray((self.weights * nll).sum(), dtype=logits.dtype)

    def backward(self, grad_output):
        # loss = sum_i w_i * nll_i (w already divided by the denominator)
        #   ->  d/dlogits_i = w_i * (softmax_i - onehot_i)
        grad_rows = kernels.softmax_cross_entropy_backward(grad_output * self.weights, self.rows, self.targets,
                                                           self.logsumexp)
        return grad_rows.reshape(self.logits_shape), None, None


def cross_entropy(logits, targets, weights=None, ignore_index=None):
    """Softmax cross-entropy from logits (..., C) and integer targets (...).

    - no weights: the mean over positions (positions whose target is `ignore_index` are left out);
    - weights (...): sum(w·nll) / (sum(w) + 1e-5), BERT's masked-LM form, where padding slots carry w = 0.
    """
    targets = targets.data if isinstance(targets, Tensor) else np.asarray(targets)
    if not np.issubdtype(targets.dtype, np.integer):
        raise TypeError(f"cross_entropy targets must be integer class ids, got dtype {targets.dtype}")
    if targets.shape != logits.shape[:-1]:
        raise ShapeError(f"cross_entropy: targets of shape {targets.shape} do not match logits of shape "
                         f"{logits.shape} (targets must be logits.shape[:-1] = {logits.shape[:-1]})")
    valid = np.ones(targets.shape, dtype=bool) if ignore_index is None else targets != ignore_index
    num_classes = logits.shape[-1]
    bad = valid & ((targets < 0) | (targets >= num_classes))
    if bad.any():
        or_ignored = ", or ignore_index" if ignore_index is not None else ""
        raise ShapeError(f"cross_entropy target {targets[bad].ravel()[0]} is outside the {num_classes} classes "
                         f"(valid ids are 0..{num_classes - 1}{or_ignored})")
    safe_targets = np.where(valid, targets, 0)
    if weights is None:
        weights, denominator = valid, max(int(valid.sum()), 1)
    else:
        weights = weights.data if isinstance(weights, Tensor) else np.asarray(weights)
        if weights.shape != targets.shape:
            raise ShapeError(f"cross_entropy weights of shape {weights.shape} must match targets {targets.shape}")
        weights = weights * valid
        # BERT's masked-LM loss (run_pretraining.py): the 1e-5 keeps a batch with no masked token finite.
        denominator = weights.sum() + 1e-5
    return CrossEntropy.apply(logits, safe_targets, weights, denominator=denominator)
