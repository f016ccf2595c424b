"""Exercise add_backward (lesson 02): `Add.backward` in minibert/autograd/ops.py.

out = a + b (broadcasting)  ->  d/da = grad, d/db = grad, each summed back to its input's shape (the adjoint
of broadcasting is a sum). The referee is the op's gradients by hand and finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.autograd.ops import Add


def test_a_bias_gets_the_column_sums():
    """x (2, 3) + bias (3,): x's gradient is grad itself, the bias's the sum of grad's rows."""
    op = Add()
    op.forward(np.zeros((2, 3)), np.zeros(3))
    grad = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
    grad_x, grad_bias = op.backward(grad)
    assert grad_x.shape == (2, 3) and grad_bias.shape == (3,), (
        f"got shapes {grad_x.shape} and {grad_bias.shape}: each gradient takes its own input's shape")
    np.testing.assert_array_equal(grad_x, grad)
    np.testing.assert_array_equal(grad_bias, [11.0, 22.0, 33.0])


def test_gradcheck_an_outer_sum():
    """(3, 1) + (1, 4): both gradients agree with finite differences."""
    rng = np.random.default_rng(0)
    a, b = Tensor(rng.standard_normal((3, 1)), requires_grad=True), Tensor(rng.standard_normal((1, 4)),
                                                                           requires_grad=True)
    projection = rng.standard_normal((3, 4))
    assert gradcheck(lambda a, b: (a + b) * projection, a, b, names=("a", "b"))
