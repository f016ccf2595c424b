"""Exercise function_apply (lesson 02): `Function.apply` in minibert/autograd/tensor.py.

An op runs its forward on plain arrays; the output Tensor remembers the op (and the op its input tensors)
only when some input wants a gradient and gradients are on, so constants and no_grad() build no graph.
"""

import numpy as np

from minibert import Tensor, gradcheck, no_grad
from minibert import functional as F


def test_the_output_remembers_its_op_and_inputs():
    """x·w with x wanting a gradient: the output requires grad, and its op's inputs are x and w."""
    x, w = Tensor(np.ones(3), requires_grad=True), Tensor(np.full(3, 2.0))
    y = x * w
    assert y.requires_grad and y._function is not None, "the output must record the op that made it"
    inputs = getattr(y._function, "inputs", None)
    assert inputs is not None and [id(t) for t in inputs] == [id(x), id(w)], "the op must keep its input tensors"
    np.testing.assert_array_equal(y.data, [2.0, 2.0, 2.0])


def test_constants_and_no_grad_build_no_graph():
    """Inputs that want no gradient, or no_grad(): the output is a plain leaf, requires_grad False."""
    y = Tensor(np.ones(3)) * Tensor(np.ones(3))
    assert not y.requires_grad and y._function is None
    with no_grad():
        z = Tensor(np.ones(3), requires_grad=True) * 2.0
    assert not z.requires_grad and z._function is None, "under no_grad() nothing is recorded"


def test_gradients_flow_through_a_chain_of_ops():
    """tanh, a product and softmax, each through apply: the gradient agrees with finite differences."""
    x = Tensor(np.random.default_rng(0).standard_normal((2, 5)), requires_grad=True)
    projection = np.random.default_rng(1).standard_normal((2, 5))
    assert gradcheck(lambda x: F.softmax(x.tanh() * 2.0, axis=-1) * projection, x, names=("x",))
