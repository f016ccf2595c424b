"""Exercise mul_backward (lesson 02): `Mul.backward` in minibert/autograd/ops.py.

out = a·b (elementwise, broadcasting)  ->  d/da = grad·b, d/db = grad·a, each summed back to its input's
shape; an input that wants no gradient gets None. The referee is finite differences over broadcast shapes.
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck


@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4))])
def test_gradcheck_broadcast_shapes(shape_a, shape_b):
    """a·b for equal shapes, a bias-like (4,) and an outer product (3, 1)·(1, 4): both gradients agree with
    finite differences."""
    rng = np.random.default_rng(0)
    a, b = Tensor(rng.standard_normal(shape_a), requires_grad=True), Tensor(rng.standard_normal(shape_b),
                                                                            requires_grad=True)
    projection = rng.standard_normal(np.broadcast_shapes(shape_a, shape_b))
    assert gradcheck(lambda a, b: a * b * projection, a, b, names=("a", "b"))


def test_a_constant_gets_no_gradient():
    """x·c with c a constant: x's gradient is c, and c gets none."""
    x, c = Tensor(np.array([1.0, 2.0]), requires_grad=True), Tensor(np.array([3.0, -4.0]))
    (x * c).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, -4.0])
    assert c.grad is None
