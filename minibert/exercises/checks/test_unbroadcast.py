"""Exercise unbroadcast (lesson 02): the adjoint of broadcasting is summation.

The referee is the defining property of an adjoint: for every x of the small shape and g of the big one,
    sum(unbroadcast(g, shape) * x) == sum(g * broadcast_to(x, g.shape)),
plus gradcheck of broadcasting ops, which call unbroadcast in their backward.
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert.autograd import unbroadcast

PAIRS = [  # (shape of the gradient, shape of the input that was broadcast to it)
    ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), ()), ((3, 4), (1, 1)),
    ((2, 3, 4), (3, 1)), ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (1,)), ((5, 1, 4), (1, 4)),
]


@pytest.mark.parametrize("big, small", PAIRS)
def test_adjoint_of_broadcast(big, small):
    """<unbroadcast(g), x> = <g, broadcast(x)> for random g and x, and the result has the small shape."""
    rng = np.random.default_rng(0)
    g, x = rng.standard_normal(big), rng.standard_normal(small)
    try:
        summed = unbroadcast(g, small)
    except ValueError as error:  # e.g. a reshape of the unsummed gradient: say which case, not just where
        pytest.fail(f"unbroadcast of a {big} gradient to {small} raised {error!r}: sum over the extra leading "
                    "axes and over every axis where the shape has a 1")
    assert np.shape(summed) == small, f"unbroadcast of a {big} gradient to {small} gave {np.shape(summed)}"
    np.testing.assert_allclose(np.sum(summed * x), np.sum(g * np.broadcast_to(x, big)), rtol=1e-12)


def test_bias_gradient_is_the_column_sum():
    """A bias b (4,) added to every row of (3, 4) activations gets the sum of the 3 rows' gradients."""
    g = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(unbroadcast(g, (4,)), [12.0, 15.0, 18.0, 21.0])


@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (4,)), ((2, 3, 1), (3, 4)), ((1, 4), (3, 1))])
def test_gradcheck_broadcasting_ops(shape_a, shape_b):
    """a * b + a / (b*b + 1), broadcast: both gradients agree with finite differences."""
    rng = np.random.default_rng(1)
    a = Tensor(rng.standard_normal(shape_a), requires_grad=True)
    b = Tensor(rng.standard_normal(shape_b), requires_grad=True)
    assert gradcheck(lambda a, b: a * b + a / (b * b + 1.0), a, b)
