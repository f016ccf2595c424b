"""Exercise sublayer_output (lesson 05b): `SublayerOutput.forward` in minibert/nn/transformer.py.

Post-LN, as BERT: LayerNorm(residual + Dropout(Dense(h))). The referee computes it with NumPy from the
layer's own weights, checks where dropout acts, and checks every gradient by finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.nn.transformer import SublayerOutput


def layer(in_features=6, hidden=4, dropout=0.0, seed=0):
    return SublayerOutput(in_features, hidden, dropout, 1e-12, np.random.default_rng(seed), std=0.5).to(np.float64)


def numpy_layer_norm(x):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12)


def test_matches_layernorm_of_the_residual_sum():
    """Eval mode: LayerNorm(residual + h·Wᵀ + b) with LayerNorm's weight 1 and bias 0 (as built)."""
    sublayer = layer().eval()
    rng = np.random.default_rng(1)
    h, residual = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3, 4))
    dense = h @ sublayer.dense.weight.data.T + sublayer.dense.bias.data
    want = numpy_layer_norm(residual + dense)
    np.testing.assert_allclose(sublayer(Tensor(h), residual=Tensor(residual)).data, want, rtol=1e-9, atol=1e-12,
                               err_msg="expected LayerNorm(residual + Dense(h)): post-LN normalises the sum")


def test_the_residual_carries_its_input():
    """With the Dense weights at 0 the sublayer adds nothing, so the output is LayerNorm(residual) exactly."""
    sublayer = layer().eval()
    sublayer.dense.weight.data[...] = 0
    sublayer.dense.bias.data[...] = 0
    residual = np.random.default_rng(2).standard_normal((1, 3, 4))
    np.testing.assert_allclose(sublayer(Tensor(np.ones((1, 3, 6))), residual=Tensor(residual)).data,
                               numpy_layer_norm(residual), rtol=1e-9, atol=1e-12,
                               err_msg="the residual must go into the sum before the LayerNorm")


def test_dropout_acts_before_the_norm():
    """In training with dropout 0.5 the output is still normalised (every row mean 0, std 1): dropout acts on
    Dense(h), before the sum and the LayerNorm, never on the normalised output."""
    sublayer = layer(dropout=0.5).train()
    rng = np.random.default_rng(3)
    out = sublayer(Tensor(rng.standard_normal((4, 5, 6))), residual=Tensor(rng.standard_normal((4, 5, 4)))).data
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-9, err_msg="dropout after the LayerNorm")
    np.testing.assert_allclose(out.std(-1), 1, atol=1e-6, err_msg="dropout after the LayerNorm")


def test_gradcheck_every_parameter_and_both_inputs():
    """Gradients of h, the residual, Dense and LayerNorm agree with finite differences."""
    sublayer = layer().eval()
    rng = np.random.default_rng(4)
    h = Tensor(rng.standard_normal((2, 3, 6)), requires_grad=True)
    residual = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    names, params = zip(*sublayer.named_parameters(), strict=True)
    projection = rng.standard_normal((2, 3, 4))
    assert gradcheck(lambda h, residual, *_: sublayer(h, residual=residual) * projection, h, residual, *params,
                     names=("h", "residual", *names))
