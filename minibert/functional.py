"""The neural-network ops BERT is made of, imported as `F` (`from minibert import functional as F`).

These are the ops of one encoder layer: linear, GELU, softmax, LayerNorm, dropout. Each is a `Function`
whose forward and backward call a kernel from `minibert/kernels/` (a Numba kernel or its plain-NumPy
reference, chosen by `minibert.set_backend`), or NumPy's BLAS product for `linear`. The kernels work on
arrays; this module wires them into the graph. The embedding lookup is nn/embedding.py's, the cross-entropy
model/losses.py's.
"""

import numpy as np

from minibert.autograd.tensor import Function, Tensor
from minibert.kernels.dispatch import check_matmul
from minibert.kernels.gelu import gelu_backward, gelu_forward
from minibert.kernels.layernorm import layer_norm_backward, layer_norm_forward
from minibert.kernels.softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward


class LinearOp(Function):
    """y = x·Wᵀ + b as one op: the same numbers as `x @ weight.T + bias`, in fewer passes over memory.

    The leading axes of x are folded into rows, so one BLAS call does the whole batch; the bias is added in
    place into the matmul's fresh output rather than into a third array; and the backward hands BLAS the
    transposed views directly, so no operand is copied.
    """

    def forward(self, x, weight, bias=None):
        # BEGIN EXERCISE linear_forward: fold the leading axes into rows, rows·Wᵀ (+ b), unfold
        rows, weight_t = check_matmul(x.reshape(-1, x.shape[-1]), weight.T, "linear")  # (N, in), N = leading axes
        y = np.matmul(rows, weight_t)  # (N, in) @ (in, out) -> (N, out), by BLAS
        if bias is not None:
            y += bias
        self.rows, self.weight, self.x_shape = rows, weight, x.shape
        return y.reshape(*x.shape[:-1], weight.shape[0])
        # END EXERCISE

    def backward(self, grad_output):
        # BEGIN EXERCISE linear_backward: dx = dy·W, dW = dyᵀ·x over all rows, db = Σ dy over rows; None if unneeded
        # y = x Wᵀ + b  ->  dx = dy W,  dW = dyᵀ x,  db = dy summed over rows
        grad_rows = grad_output.reshape(-1, self.weight.shape[0])  # (N, out)
        grad_x = grad_weight = grad_bias = None
        if self.needs_grad[0]:
            grad_x = np.matmul(grad_rows, self.weight).reshape(self.x_shape)  # (N, out) @ (out, in)
        if self.needs_grad[1]:
            grad_weight = np.matmul(grad_rows.T, self.rows)  # (out, N) @ (N, in) -> (out, in)
        has_bias = len(self.needs_grad) == 3
        if has_bias and self.needs_grad[2]:
            grad_bias = grad_rows.sum(axis=0)  # (out,)
        return (grad_x, grad_weight, grad_bias) if has_bias else (grad_x, grad_weight)
        # END EXERCISE


def linear(x, weight, bias=None):
    """x·Wᵀ + b for x (..., in), weight (out, in) as PyTorch and HF store it, bias (out,) or None."""
    return LinearOp.apply(x, weight) if bias is None else LinearOp.apply(x, weight, bias)


class GELUOp(Function):
    def forward(self, x, approximate="none"):
        # BEGIN EXERCISE gelu_op: the kernel's GELU of x in the form asked; save what the backward reads
        self.x, self.approximate = x, approximate
        return gelu_forward(x, approximate)
        # END EXERCISE

    def backward(self, grad_output):
        # y = x Φ(x)  ->  dy/dx = Φ(x) + x φ(x) (or the tanh form's derivative), in the kernel
        return gelu_backward(grad_output, self.x, self.approximate)


def gelu(x, approximate="none"):
    """GELU(x) = x·Φ(x) (Hendrycks & Gimpel 2016), BERT's activation. "none" is the exact erf form of the paper
    and HF's `gelu`; "tanh" is the approximation Google's code later used (HF's `gelu_new`)."""
    return GELUOp.apply(x, approximate=approximate)


def additive_mask(mask, dtype):
    """Turn a mask into the additive form the softmax kernel takes: 0 where a position is kept, the dtype's most
    negative finite number where it is dropped (as HF does; Google used -10000). A boolean mask is True (or 1)
    for kept positions; a float mask is already additive."""
    mask = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    # BEGIN EXERCISE additive_mask: boolean: 0 where kept, the dtype's most negative finite number where dropped
    if mask.dtype == np.bool_:
        return np.where(mask, 0, np.finfo(dtype).min).astype(dtype)
    return mask.astype(dtype, copy=False)
    # END EXERCISE


class SoftmaxOp(Function):
    def forward(self, x, mask=None):
        # BEGIN EXERCISE softmax_op: the kernel's softmax of x + mask; save what the backward reads
        self.y = softmax_forward(x, mask)
        return self.y
        # END EXERCISE

    def backward(self, grad_output):
        return softmax_backward(grad_output, self.y)


class LogSoftmaxOp(Function):
    def forward(self, x, mask=None):
        self.y = log_softmax_forward(x, mask)
        return self.y

    def backward(self, grad_output):
        return log_softmax_backward(grad_output, self.y)


def _softmax_op(op, x, axis, mask):
    if mask is not None:
        mask = additive_mask(mask, x.dtype)  # the kernel checks that it broadcasts to x
    if axis in (-1, x.ndim - 1):
        return op.apply(x, mask=mask)
    # The kernels work over the last axis: move `axis` there and back (the mask's too, given x's rank first).
    x_last = x.transpose(_swap_last(x.ndim, axis))
    mask_last = None if mask is None else np.swapaxes(mask.reshape((1,) * (x.ndim - mask.ndim) + mask.shape),
                                                      axis, -1)
    return op.apply(x_last, mask=mask_last).transpose(_swap_last(x.ndim, axis))


def _swap_last(ndim, axis):
    axes = list(range(ndim))
    axes[axis], axes[-1] = axes[-1], axes[axis]
    return tuple(axes)


def softmax(x, axis=-1, mask=None):
    """exp(x) / sum(exp(x)) along `axis`. `mask` is boolean (True = keep) or additive, broadcastable to x;
    masked entries get probability 0."""
    return _softmax_op(SoftmaxOp, x, axis, mask)


def log_softmax(x, axis=-1, mask=None):
    """log(softmax(x)), computed stably as x - logsumexp(x)."""
    return _softmax_op(LogSoftmaxOp, x, axis, mask)


class LayerNormOp(Function):
    def forward(self, x, weight, bias, eps=1e-12):
        # BEGIN EXERCISE layer_norm_op: the kernel's LayerNorm; save what the backward reads (not the bias)
        y, self.mean, self.rstd = layer_norm_forward(x, weight, bias, eps)
        self.x, self.weight = x, weight
        return y
        # END EXERCISE

    def backward(self, grad_output):
        return layer_norm_backward(grad_output, self.x, self.weight, self.mean, self.rstd)


def layer_norm(x, weight, bias, eps=1e-12):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (Ba et al. 2016), fused in one kernel."""
    return LayerNormOp.apply(x, weight, bias, eps=eps)


class DropoutOp(Function):
    def forward(self, x, p, rng):
        # BEGIN EXERCISE dropout_forward: keep with probability 1 - p, the kept scaled by 1/(1 - p); save the scale
        # Inverted dropout: keep each element with probability 1 - p, and scale the kept ones by 1/(1 - p)
        # now, so the expected output equals the input and eval mode needs no rescaling.
        keep = rng.random(x.shape) >= p  # True with probability 1 - p
        self.scale = keep / np.asarray(1.0 - p, dtype=x.dtype)  # 1/(1 - p) where kept, else 0
        return x * self.scale
        # END EXERCISE

    def backward(self, grad_output):
        # BEGIN EXERCISE dropout_backward: grad times the scale the forward saved (0 where dropped)
        # y = x * scale  ->  dy/dx = scale: 1/(1 - p) for kept elements, 0 for dropped ones
        return grad_output * self.scale
        # END EXERCISE


def dropout(x, p, training, rng=None):
    """Zero each element with probability p while training (Srivastava et al. 2014); the identity in eval mode
    or when p = 0. Reproducible given a `numpy.random.Generator`."""
    check_dropout(p, training, rng)
    if not training or p == 0.0:
        return x
    return DropoutOp.apply(x, p=p, rng=rng)


def check_dropout(p, training, rng):
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability p={p} must be in [0, 1)")
    if training and p > 0.0 and rng is None:
        raise ValueError("dropout in training mode needs rng=numpy.random.default_rng(seed), so runs are reproducible")
