"""Exercise layer_norm_op (lesson 04): `LayerNormOp.forward` in minibert/functional.py.

The op around the LayerNorm kernel: its forward runs the kernel with the eps asked for and saves what its
backward reads: x, the weight, and the rows' mean and rstd the kernel returns (the bias's gradient needs
none of them). The referee is the definition in NumPy, and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F

RNG = np.random.default_rng(0)
X = 2 + RNG.standard_normal((2, 3, 4))
WEIGHT, BIAS = 1 + 0.3 * RNG.standard_normal(4), RNG.standard_normal(4)


def test_matches_the_definition_with_a_large_eps():
    """eps = 0.5, large enough to matter: (x - mean)/√(var + eps)·weight + bias over the last axis."""
    want = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 0.5) * WEIGHT + BIAS
    got = F.layer_norm(Tensor(X), Tensor(WEIGHT), Tensor(BIAS), eps=0.5).data
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg="expected LayerNorm with the eps given")


def test_gradcheck_x_weight_and_bias():
    """The backward reads what the forward saved: the gradients of x, weight and bias agree with finite
    differences."""
    x, weight, bias = (Tensor(array.copy(), requires_grad=True) for array in (X, WEIGHT, BIAS))
    projection = np.random.default_rng(1).standard_normal(X.shape)
    assert gradcheck(lambda x, weight, bias: F.layer_norm(x, weight, bias, eps=1e-5) * projection, x, weight,
                     bias, names=("x", "weight", "bias"))
