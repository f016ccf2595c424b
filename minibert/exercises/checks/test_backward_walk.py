"""Exercise backward_walk (lesson 02): the walk inside `Tensor.backward` in minibert/autograd/tensor.py.

From the loss, in reverse topological order, each op's backward turns its output's gradient into one per
input; a tensor used twice receives the sum; a leaf adds its gradient into .grad (gradients accumulate
across calls). The referee is finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck


def test_gradcheck_a_graph_that_reuses_tensors():
    """f = sum((x·w + x)·w·tanh(x)): x and w each feed several ops; their gradients agree with finite
    differences."""
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = Tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x, w: ((x * w + x) * w * x.tanh()).sum(), x, w, names=("x", "w"))


def test_a_tensor_used_twice_gets_the_sum():
    """y = x·x summed: the gradient is 2x, the sum of the two uses, not one of them."""
    x = Tensor(np.array([1.0, -2.0, 3.0]), requires_grad=True)
    (x * x).sum().backward()
    assert x.grad is not None, "the leaf x got no gradient"
    np.testing.assert_allclose(x.grad, [2.0, -4.0, 6.0], err_msg="the gradients of both uses must add up")


def test_leaf_gradients_accumulate_across_calls():
    """Two backward passes without zeroing: .grad holds the sum of both (as in PyTorch)."""
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    (x * 3.0).sum().backward()
    (x * 5.0).sum().backward()
    np.testing.assert_allclose(x.grad, [8.0, 8.0], err_msg="backward adds into .grad, it does not replace it")


def test_a_gradient_seeds_the_walk():
    """backward(grad) on a non-scalar output: that grad is where the walk starts."""
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    (x * 2.0).backward(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(x.grad, [2.0, 20.0, 200.0])
