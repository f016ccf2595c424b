"""The ops of the speed layer: each stands for one or several of the core's ops and computes the same numbers
(up to float32 rounding) with fewer passes over memory or on more cores, with the same checks.

- `shared_linear`: F.linear on the products the process plan shares among its threads (fast/kernels/matmul.py);
- `self_attention`: q, k and v in one (B, S, 3H) array -> softmax(q·kᵀ/√D + mask), dropout, · v, all heads;
- `bias_gelu`: F.gelu(x + bias), the feed-forward's bias added inside GELU's pass;
- `dropout_add_layer_norm`: F.layer_norm(residual + F.dropout(h)), "Add & Norm", the end of every sublayer;
- `seeded_dropout`: F.dropout with its draws made inside the kernel (seeded_dropout.py).
Their dropout draws come from a seed taken from the model's Generator, so they drop other elements than the
core's F.dropout does: the same rule and rate, another stream (tests/test_fast.py checks both).

Legend: B batch, S sequence length, H hidden size, A heads, D head size.
"""

import math

import numpy as np

from minibert.autograd.tensor import Function
from minibert.errors import ShapeError
from minibert.fast import kernels as fast_kernels
from minibert.functional import additive_mask, check_dropout


class SharedLinearOp(Function):
    """y = x·Wᵀ + b as functional.LinearOp computes it, on the speed layer's products: inside the process plan
    the forward's product is cut over the plan's threads, and the backward's two products run at once, each
    whole on half of them. It computes both gradients always: the speed layer trains, and in training the
    weight and the activations below both want theirs."""

    def forward(self, x, weight, bias=None):
        rows = x.reshape(-1, x.shape[-1])  # (N, in), N = product of the leading axes
        y = fast_kernels.matmul_forward(rows, weight.T)  # (N, in) @ (in, out) -> (N, out)
        if bias is not None:
            y += bias
        self.rows, self.weight, self.x_shape = rows, weight, x.shape
        return y.reshape(*x.shape[:-1], weight.shape[0])

    def backward(self, grad_output):
        # y = x Wᵀ + b  ->  dx = dy W,  dW = dyᵀ x,  db = dy summed over rows
        grad_rows = grad_output.reshape(-1, self.weight.shape[0])  # (N, out)
        # dx: (N, out) @ (out, in) -> (N, in);  dW: (out, N) @ (N, in) -> (out, in)
        grad_x, grad_weight = fast_kernels.matmul_pair(grad_rows, self.weight, grad_rows.T, self.rows)
        grads = (grad_x.reshape(self.x_shape), grad_weight)
        return (*grads, grad_rows.sum(axis=0)) if len(self.needs_grad) == 3 else grads


def shared_linear(x, weight, bias=None):
    """F.linear(x, weight, bias) with its products shared among the process plan's threads."""
    return SharedLinearOp.apply(x, weight) if bias is None else SharedLinearOp.apply(x, weight, bias)


class BiasGELUOp(Function):
    def forward(self, x, bias, approximate="none"):
        y, self.slope = fast_kernels.bias_gelu_with_slope(x, bias, approximate)  # keep dy/dz, not x
        return y

    def backward(self, grad_output):
        return fast_kernels.bias_gelu_backward(grad_output, self.slope)  # (grad_x, grad_bias)


def bias_gelu(x, bias, approximate="none"):
    """F.gelu(x + bias) as one op: the feed-forward's first Linear without its bias add, then GELU (see
    fast/kernels/bias_gelu.py, which also checks the form and the bias's shape); the same numbers as
    `F.gelu(x + bias)` (to the float32 fit's 4.5e-7 for float32), one pass fewer each way."""
    return BiasGELUOp.apply(x, bias, approximate=approximate)


class SelfAttentionOp(Function):
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
        self.seed = fast_kernels.draw_seed(rng) if p > 0 else np.uint64(0)  # where dropout(probs) draws it
        scores = fast_kernels.matmul_forward(q, k.swapaxes(-1, -2))  # (B, A, S, S)
        self.probs, self.dropped = fast_kernels.attention_weights_forward(scores, mask, self.scale, self.seed,
                                                                          self.keep)
        context = np.empty((batch, seq_len, num_heads, head_size), dtype=qkv.dtype)
        fast_kernels.matmul_forward(self.dropped, v, out=context.transpose(0, 2, 1, 3))  # (B, A, S, D) view
        return context.reshape(batch, seq_len, num_heads * head_size), self.probs  # probs: a side array

    def backward(self, grad_output):
        q, k, v = self.heads
        batch, num_heads, seq_len, head_size = q.shape
        grad_context = grad_output.reshape(batch, seq_len, num_heads, head_size).transpose(0, 2, 1, 3)
        grad_qkv = np.empty((batch, seq_len, 3, num_heads, head_size), dtype=grad_output.dtype)
        grad_q, grad_k, grad_v = grad_qkv.transpose(2, 0, 3, 1, 4)  # views to write into
        # context = dropped @ v  ->  grad_dropped = grad_context @ vᵀ,  grad_v = droppedᵀ @ grad_context
        grad_dropped, _ = fast_kernels.matmul_pair(grad_context, v.swapaxes(-1, -2),
                                                   self.dropped.swapaxes(-1, -2), grad_context, out2=grad_v)
        grad_scores = fast_kernels.attention_weights_backward(grad_dropped, self.probs, self.scale, self.seed,
                                                              self.keep)
        # scores = q @ kᵀ  ->  grad_q = grad_scores @ k,  grad_k = grad_scoresᵀ @ q
        fast_kernels.matmul_pair(grad_scores, k, grad_scores.swapaxes(-1, -2), q, out1=grad_q, out2=grad_k)
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
    check_dropout(p, training, rng)
    if mask is not None:
        mask = additive_mask(mask, qkv.dtype)  # the kernel checks that it broadcasts to the (B, A, S, S) scores
    return SelfAttentionOp.apply(qkv, num_heads=num_heads, mask=mask, p=p if training else 0.0, rng=rng)


class AddNormOp(Function):
    def forward(self, h, residual, weight, bias, eps, p, rng):
        self.keep = 1.0 - p
        self.seed = fast_kernels.draw_seed(rng) if p > 0 else np.uint64(0)  # one draw, where dropout(h) makes it
        y, self.s, self.mean, self.rstd = fast_kernels.add_norm_forward(h, residual, self.seed, self.keep, weight, bias,
                                                                   eps)
        self.weight = weight
        return y

    def backward(self, grad_output):
        # s = residual + dropout(h), y = LayerNorm(s): LayerNorm's backward gives grad_s, which is the residual's
        # gradient; h's is grad_s scaled as dropout's backward does (the mask drawn again from the seed)
        return fast_kernels.add_norm_backward(grad_output, self.s, self.weight, self.mean, self.rstd, self.seed,
                                              self.keep)


def dropout_add_layer_norm(h, residual, weight, bias, eps, p, training, rng=None):
    """layer_norm(residual + seeded_dropout(h, p, training, rng), weight, bias, eps) as one op, "Add & Norm",
    the end of every BERT sublayer: the same numbers (up to rounding, see fast/kernels/add_norm.py) in one pass
    over memory instead of three, and no dropout mask kept for the backward."""
    check_dropout(p, training, rng)
    return AddNormOp.apply(h, residual, weight, bias, eps=eps, p=p if training else 0.0, rng=rng)


class SeededDropoutOp(Function):
    def forward(self, x, p, rng):
        self.keep = 1.0 - p
        y, self.kept = fast_kernels.dropout_forward(x, fast_kernels.draw_seed(rng), self.keep)
        return y

    def backward(self, grad_output):
        # y = x * (1/keep or 0)  ->  dy/dx = 1/keep for kept elements, 0 for dropped ones
        return fast_kernels.dropout_backward(grad_output, self.kept, self.keep)


def seeded_dropout(x, p, training, rng=None):
    """F.dropout(x, p, training, rng), its draws made in the kernel from one seed (no array of draws)."""
    check_dropout(p, training, rng)
    if not training or p == 0.0:
        return x
    return SeededDropoutOp.apply(x, p=p, rng=rng)
