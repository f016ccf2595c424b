"""The autograd engine's semantics: what backward() promises beyond each op's own rule.

Exercises: each test names one property of reverse-mode differentiation; make it pass in your own engine.
"""

import gc
import weakref

import numpy as np
import pytest

from minibert import Tensor, no_grad
from minibert.autograd import Function, unbroadcast
from minibert.errors import MinibertError, ShapeError


def leaf(*shape, seed=0):
    return Tensor(np.asarray(np.random.default_rng(seed).standard_normal(shape)), requires_grad=True)


def test_dtype_rules():
    """ndarrays keep their dtype (float64 stays float64); Python lists and scalars become float32;
    Python numbers mixed into an op take the tensor's dtype."""
    assert Tensor(np.zeros(3)).dtype == np.float64
    assert Tensor([1, 2, 3]).dtype == np.float32
    assert Tensor(2.5).dtype == np.float32
    assert Tensor(np.array([1, 2], dtype=np.int64)).dtype == np.int64
    x = Tensor(np.ones(3, dtype=np.float32))
    assert (x * 2.0 + 1.0).dtype == np.float32
    assert (1.0 - x / 3.0).dtype == np.float32
    assert (leaf(3) * 2.0).dtype == np.float64


def test_numpy_sees_the_values():
    """np.asarray(tensor) is the tensor's array (so outputs can be compared with NumPy directly), and an
    ndarray on the left of an operator still builds a graph (Tensor's reflected operators win)."""
    x = leaf(2, 3)
    assert np.asarray(x) is x.data
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    y = np.ones((2, 3)) * x
    assert isinstance(y, Tensor) and y.requires_grad


def test_scalar_backward_seeds_one():
    """backward() on a scalar starts from d(out)/d(out) = 1: for out = 3x, x.grad = 3."""
    x = leaf()
    (x * 3.0).backward()
    assert x.grad == pytest.approx(3.0)


def test_gradients_accumulate_across_backward_calls():
    """Two backward passes add up (as PyTorch): d(x·x)/dx = 2x, twice, gives 4x; zero_grad clears."""
    x = leaf(4)
    (x * x).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad, 4 * x.data)
    x.zero_grad()
    assert x.grad is None


def test_x_times_x_counts_both_uses():
    """x * x uses x twice: the gradient is x + x = 2x, not x (micrograd PR #64's bug)."""
    x = leaf(5)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad, 2 * x.data)


def test_reused_non_leaf_diamond():
    """h = 2x is used by two branches (h·h and h): x.grad must collect both: d/dx (4x² + 2x) = 8x + 2.
    A wrong topological order would run h's backward before both branches reached it."""
    x = leaf(3)
    h = x * 2.0
    (h * h + h).sum().backward()
    np.testing.assert_allclose(x.grad, 8 * x.data + 2)


def test_deep_chain_has_no_recursion_limit():
    """A chain of 10,000 ops backpropagates (the topological sort is iterative, not recursive)."""
    x = Tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad == pytest.approx(1.0001 ** 10_000, rel=1e-9)


def test_no_grad_records_nothing():
    """Inside no_grad() results do not require grad and keep no graph; outside, recording resumes."""
    x = leaf(3)
    with no_grad():
        y = x * 2.0
    assert not y.requires_grad and y.is_leaf
    assert (x * 2.0).requires_grad


def test_detach_cuts_the_graph():
    """A detached tensor has the same values but passes no gradient: d/dx (x · detach(x)) = detach(x)."""
    x = leaf(3)
    (x * x.detach()).sum().backward()
    np.testing.assert_allclose(x.grad, x.data)


def test_graph_is_released_after_backward():
    """After backward the ops drop their inputs and saved arrays, so a step's activations are freed; a second
    backward through the same graph says how to keep it."""
    x = leaf(100, 100)
    hidden = (x * 2.0).tanh()
    saved = weakref.ref(hidden)
    loss = (hidden * hidden).sum()
    del hidden
    loss.backward()
    gc.collect()
    assert saved() is None, "the intermediate tensor is still referenced after backward()"
    with pytest.raises(MinibertError, match="retain_graph=True"):
        loss.backward()


def test_retain_graph_allows_a_second_backward():
    """backward(retain_graph=True) keeps the graph: a second pass adds the same gradient again."""
    x = leaf(3)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad, 4 * x.data)


def test_backward_on_non_scalar_needs_a_gradient():
    """A non-scalar output has no single derivative: backward() asks for grad and names the shape."""
    y = leaf(2, 3) * 2.0
    with pytest.raises(ShapeError, match=r"\(2, 3\)"):
        y.backward()
    y.backward(np.ones((2, 3)))  # with an explicit gradient it works


def test_backward_without_requires_grad_is_explained():
    with pytest.raises(MinibertError, match="requires_grad"):
        Tensor(np.ones(3)).sum().backward()


def test_wrong_gradient_shape_from_an_op_is_caught():
    """Each gradient's shape must equal its tensor's: a backward returning the wrong shape is named."""
    class Broken(Function):
        def forward(self, a):
            return a.sum(keepdims=True)

        def backward(self, grad_output):
            return grad_output  # forgot to broadcast back to a's shape

    with pytest.raises(ShapeError, match="Broken"):
        Broken.apply(leaf(3)).sum().backward()


@pytest.mark.parametrize("grad_shape, shape, expected", [
    ((3, 4), (4,), lambda g: g.sum(0)),
    ((3, 4), (1, 4), lambda g: g.sum(0, keepdims=True)),
    ((2, 3, 4), (3, 1), lambda g: g.sum((0, 2))[:, None]),
    ((2, 3, 4), (), lambda g: g.sum()),
    ((3, 4), (3, 4), lambda g: g),
])
def test_unbroadcast_sums_over_broadcast_axes(grad_shape, shape, expected):
    """unbroadcast is the adjoint of broadcasting: summing over the axes broadcasting created or stretched."""
    grad = np.random.default_rng(0).standard_normal(grad_shape)
    out = unbroadcast(grad, shape)
    assert out.shape == shape
    np.testing.assert_allclose(out, expected(grad))


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(TypeError, match="token ids"):
        Tensor(np.array([1, 2]), requires_grad=True)
