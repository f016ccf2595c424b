"""Exercise layer_norm_backward (lesson 04): `layer_norm_backward_numpy` in minibert/kernels/layernorm.py.

The referees: gradcheck of F.layer_norm for x, weight and bias together, and the same LayerNorm written
with elementary Tensor ops, whose backward the engine derives by itself.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F
from minibert.kernels.layernorm import layer_norm_backward_numpy, layer_norm_forward_numpy


def test_gradcheck_x_weight_and_bias():
    """LayerNorm over the last axis of (2, 3, 5): the gradients of x, weight and bias all agree with finite
    differences (eps 1e-5 in the forward, so the variance term matters)."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((2, 3, 5)), requires_grad=True)
    weight = Tensor(1.0 + 0.1 * rng.standard_normal(5), requires_grad=True)
    bias = Tensor(0.1 * rng.standard_normal(5), requires_grad=True)
    projection = rng.standard_normal((2, 3, 5))
    assert gradcheck(lambda x, w, b: F.layer_norm(x, w, b, eps=1e-5) * projection, x, weight, bias)


def test_matches_layer_norm_built_from_elementary_ops():
    """(x - mean) / sqrt(var + eps) * w + b, built from +, *, mean and sqrt: same gradients to 1e-10."""
    rng = np.random.default_rng(1)
    x_data, w_data, b_data = rng.standard_normal((4, 6)), rng.standard_normal(6), rng.standard_normal(6)
    grad_y = rng.standard_normal((4, 6))
    x = Tensor(x_data, requires_grad=True)
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    y = centered / (variance + 1e-5).sqrt() * Tensor(w_data) + Tensor(b_data)
    (y * grad_y).sum().backward()

    _, mean, rstd = layer_norm_forward_numpy(x_data, w_data, b_data, 1e-5)
    grad_x, grad_w, grad_b = layer_norm_backward_numpy(grad_y, x_data, w_data, mean, rstd)
    np.testing.assert_allclose(grad_x, x.grad, rtol=1e-9, atol=1e-10)
    x_hat = (x_data - x_data.mean(-1, keepdims=True)) / np.sqrt(x_data.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(grad_w, (grad_y * x_hat).sum(axis=0), rtol=1e-9)
    np.testing.assert_allclose(grad_b, grad_y.sum(axis=0), rtol=1e-12)
