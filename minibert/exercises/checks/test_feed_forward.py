"""Exercise feed_forward (lesson 05b): `FeedForward.forward` in minibert/nn/transformer.py.

The widening half of the feed-forward network, act(x·W₁ᵀ + b₁), (B, S, H) -> (B, S, I). The referee computes
it with NumPy (the exact GELU through math.erf) and checks every gradient by finite differences.
"""

import math

import numpy as np

from minibert import Tensor, gradcheck_module
from minibert.nn.transformer import FeedForward


def block(hidden_act="gelu", seed=0):
    layer = FeedForward(4, 7, hidden_act, np.random.default_rng(seed), std=0.8).to(np.float64)
    layer.dense.bias.data[...] = np.random.default_rng(seed + 1).standard_normal(7)  # not 0, so it shows
    return layer


def numpy_gelu(x):
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def test_matches_the_activation_of_the_dense_layer():
    """(B, S, H) -> (B, S, I) equal to gelu(x·Wᵀ + b) with the exact (erf) GELU, and to relu(...) for relu."""
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    for hidden_act, act in (("gelu", numpy_gelu), ("relu", lambda z: np.maximum(z, 0))):
        layer = block(hidden_act)
        want = act(x @ layer.dense.weight.data.T + layer.dense.bias.data)
        got = layer(Tensor(x))
        assert got.shape == (2, 3, 7), f"expected (B, S, I) = (2, 3, 7), got {got.shape}"
        np.testing.assert_allclose(got.data, want, rtol=1e-9, atol=1e-12,
                                   err_msg=f"expected {hidden_act}(x·Wᵀ + b), the activation of config.hidden_act")


def test_gradcheck_x_weight_and_bias():
    """Gradients of x and of the dense layer's weight and bias agree with finite differences."""
    layer = block()
    rng = np.random.default_rng(3)
    x = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck_module(layer, layer, x, names=("x",))
