"""Exercise sublayer_output (lesson 05b): `SublayerOutput.forward` in minibert/nn/transformer.py.

Post-LN, as BERT: LayerNorm(residual + Dropout(Dense(h))). The referee computes it with NumPy from the
layer's own weights, checks where dropout acts, and checks every gradient by finite differences.
"""

import itertools

import numpy as np

from minibert import Tensor, gradcheck_module
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


def test_dropout_drops_dense_h_only():
    """BERT drops the sublayer's projected output, then adds the residual and normalises (Google modeling.py
    `transformer_model`: `dropout(attention_output)`, then `layer_norm(attention_output + layer_input)`). With
    dropout 0.5, H = 4 and a seeded generator, each output row must be LayerNorm(residual + keep·Dense(h)) for
    one of the 16 patterns keep of 0s and 1/0.5s, and some value must be dropped: dropout after the norm, or
    over the residual stream (LayerNorm(Dropout(residual + Dense(h)))), matches no pattern."""
    sublayer = layer(dropout=0.5).train()
    rng = np.random.default_rng(3)
    h, residual = rng.standard_normal((4, 5, 6)), rng.standard_normal((4, 5, 4))
    out = sublayer(Tensor(h), residual=Tensor(residual)).data
    dense = h @ sublayer.dense.weight.data.T + sublayer.dense.bias.data  # (B, S, H)
    keeps = np.array(list(itertools.product([0.0, 2.0], repeat=4)))  # every drop pattern of H = 4, (16, H)
    dropped_any = False
    for b, s in np.ndindex(4, 5):
        candidates = numpy_layer_norm(residual[b, s] + keeps * dense[b, s])  # (16, H): the row under each pattern
        match = np.flatnonzero(np.abs(candidates - out[b, s]).max(axis=1) < 1e-9)
        assert len(match), (f"output[{b}, {s}] is not LayerNorm(residual + Dropout(Dense(h))): drop Dense(h) "
                            "only, before the residual sum, never the residual or the normalised output")
        dropped_any |= not keeps[match[0]].all()
    assert dropped_any, "nothing was dropped: apply self.dropout to Dense(h) in training"


def test_eval_mode_drops_nothing():
    """Built with dropout 0.5 but in eval mode, the sublayer is LayerNorm(residual + Dense(h)) exactly: dropout
    acts only in training. (The other eval-mode tests build it with p = 0, where no dropout could show.)"""
    sublayer = layer(dropout=0.5).eval()
    rng = np.random.default_rng(5)
    h, residual = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 3, 4))
    want = numpy_layer_norm(residual + h @ sublayer.dense.weight.data.T + sublayer.dense.bias.data)
    np.testing.assert_allclose(sublayer(Tensor(h), residual=Tensor(residual)).data, want, rtol=1e-9, atol=1e-12,
                               err_msg="in eval mode dropout must do nothing: use self.dropout, which knows the mode")


def test_gradcheck_every_parameter_and_both_inputs():
    """Gradients of h, the residual, Dense and LayerNorm agree with finite differences."""
    sublayer = layer().eval()
    rng = np.random.default_rng(4)
    h = Tensor(rng.standard_normal((2, 3, 6)), requires_grad=True)
    residual = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck_module(sublayer, lambda h, residual: sublayer(h, residual=residual), h, residual,
                            names=("h", "residual"))
