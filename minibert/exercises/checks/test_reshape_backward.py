"""Exercise reshape_backward (lesson 05a): `Reshape.backward` in minibert/autograd/ops.py.

A reshape keeps the numbers and their order, so the gradient only takes the input's shape back. The referee
is the gradient by hand and finite differences through the head split's reshape.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.autograd.ops import Reshape


def test_the_gradient_takes_the_input_shape():
    """(2, 6) reshaped to (3, 4): the (3, 4) gradient comes back as (2, 6), entry k to entry k."""
    op = Reshape()
    op.forward(np.zeros((2, 6)), (3, 4))
    grad = np.arange(12.0).reshape(3, 4)
    got = op.backward(grad)
    assert got.shape == (2, 6), f"expected the input's shape (2, 6), got {got.shape}"
    np.testing.assert_array_equal(got, np.arange(12.0).reshape(2, 6))


def test_gradcheck_a_head_split():
    """(2, 3, 8) -> (2, 3, 2, 4), as the heads are split: the gradient agrees with finite differences."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((2, 3, 8)), requires_grad=True)
    projection = rng.standard_normal((2, 3, 2, 4))
    assert gradcheck(lambda x: x.reshape(2, 3, 2, 4) * projection, x, names=("x",))
