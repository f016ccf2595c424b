"""Exercise dropout_backward (lesson 05b): `DropoutOp.backward` in minibert/functional.py.

y = x·scale with scale 1/(1 - p) where kept and 0 where dropped  ->  dy/dx = scale: the gradient passes
through the same entries the forward kept, scaled the same way. The referee is dy/dx = y/x read off the
forward's own output, and finite differences with the draws held fixed.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F


def test_the_gradient_is_y_over_x():
    """p = 0.4 on 200 nonzero entries: the gradient of sum(y·g) is g·y/x, 0 where dropped, g/0.6 where kept."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.uniform(1, 2, size=(4, 50)), requires_grad=True)
    y = F.dropout(x, 0.4, training=True, rng=np.random.default_rng(1))
    grad = rng.standard_normal((4, 50))
    y.backward(grad)
    slope = y.data / x.data
    assert set(np.round(np.unique(slope), 12)) == {0.0, round(1 / 0.6, 12)}
    np.testing.assert_allclose(x.grad, grad * slope, rtol=1e-12, atol=1e-15)


def test_gradcheck_with_fixed_draws():
    """The same draws at every evaluation: the gradient agrees with finite differences."""
    x = Tensor(np.random.default_rng(2).standard_normal((3, 5)), requires_grad=True)
    projection = np.random.default_rng(3).standard_normal((3, 5))
    assert gradcheck(lambda x: F.dropout(x, 0.5, training=True, rng=np.random.default_rng(4)) * projection, x,
                     names=("x",))
