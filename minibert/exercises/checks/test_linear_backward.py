"""Exercise linear_backward (lesson 03): `LinearOp.backward` in minibert/functional.py.

y = x·Wᵀ + b  ->  dx = dy·W, dW = dyᵀ·x (summed over every row of every sequence), db = dy summed over rows.
The referee is finite differences, with a square W so that a transposed gradient has the right shape and
the wrong numbers.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F


def test_gradcheck_x_weight_and_bias():
    """Gradients of x (2, 3, 4), W (4, 4) and b (4,) agree with finite differences."""
    rng = np.random.default_rng(0)
    x, weight, bias = (Tensor(rng.standard_normal(shape), requires_grad=True) for shape in ((2, 3, 4), (4, 4), (4,)))
    projection = rng.standard_normal((2, 3, 4))
    assert gradcheck(lambda x, w, b: F.linear(x, w, b) * projection, x, weight, bias, names=("x", "weight", "bias"))


def test_gradcheck_without_bias_and_with_a_constant_input():
    """No bias: gradients of x and W; x constant (no gradient wanted): W's alone."""
    rng = np.random.default_rng(1)
    x, weight = (Tensor(rng.standard_normal(shape), requires_grad=True) for shape in ((3, 4), (5, 4)))
    projection = rng.standard_normal((3, 5))
    assert gradcheck(lambda x, w: F.linear(x, w) * projection, x, weight, names=("x", "weight"))
    constant = Tensor(rng.standard_normal((3, 4)))
    assert gradcheck(lambda w: F.linear(constant, w) * projection, weight, names=("weight",))
