"""Every basic op against central finite differences, in float64, over hypothesis-generated shapes.

Exercise: when you write an op's backward, its test here is the referee.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibert import Tensor, concat, gradcheck, stack
from minibert.errors import ShapeError

# The broadcasting matrix of HIPS autograd: every pair of these shapes that broadcasts is tried.
SHAPES = [(), (4,), (3, 4), (1, 4), (2, 3, 4)]
BROADCAST_PAIRS = [(a, b) for a in SHAPES for b in SHAPES]


def leaf(shape, seed=0, low=None):
    values = np.asarray(np.random.default_rng(seed).standard_normal(shape))
    if low is not None:  # keep away from a function's singularity (log, sqrt, division)
        values = np.abs(values) + low
    return Tensor(values, requires_grad=True)


small_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS)
@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_binary_ops_broadcast(op, shape_a, shape_b):
    """a OP b for every pair of the broadcasting matrix; gradients are unbroadcast back to each shape."""
    a, b = leaf(shape_a, 1), leaf(shape_b, 2, low=0.5 if op == "/" else None)
    fns = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}
    assert gradcheck(fns[op], a, b)


def test_python_scalars_mix_in():
    """2.0 * x + 1.0 - x / 4.0 and 1.0 / x: numbers on either side of an operator."""
    assert gradcheck(lambda x: 2.0 * x + 1.0 - x / 4.0 + 1.0 / x - (3.0 - x), leaf((3, 4), low=0.5))


@given(small_shapes, st.sampled_from([2, 3, 0.5, -1.5]))
def test_pow(shape, exponent):
    assert gradcheck(lambda x: x ** exponent, leaf(shape, low=0.5))


@given(small_shapes, st.sampled_from(["exp", "log", "tanh", "sqrt", "relu", "abs", "neg"]))
def test_elementwise(shape, name):
    """exp, log, tanh, sqrt, relu, abs and negation (relu and abs away from their kink at 0, where they have
    no derivative)."""
    fn = {"exp": Tensor.exp, "log": Tensor.log, "tanh": Tensor.tanh, "sqrt": Tensor.sqrt,
          "relu": Tensor.relu, "abs": Tensor.__abs__, "neg": Tensor.__neg__}[name]
    x = leaf(shape, low=0.1) if name in ("log", "sqrt") else leaf(shape)
    if name in ("relu", "abs"):
        x.data[np.abs(x.data) < 1e-3] = 0.5
    assert gradcheck(fn, x)


@given(st.data())
def test_sum_and_mean(data):
    """sum and mean over every axis choice, with and without keepdims."""
    shape = data.draw(small_shapes)
    axis = data.draw(st.sampled_from([None, *range(len(shape)), tuple(range(len(shape)))]))
    keepdims = data.draw(st.booleans())
    x = leaf(shape)
    assert gradcheck(lambda x: x.sum(axis=axis, keepdims=keepdims), x)
    assert gradcheck(lambda x: x.mean(axis=axis, keepdims=keepdims), x)
    np.testing.assert_allclose(x.mean(axis=axis, keepdims=keepdims).data, x.data.mean(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3, 4), (4, 5)),          # 2-D
    ((2, 3, 4), (4, 5)),       # activations times a weight matrix
    ((2, 3, 4), (2, 4, 5)),    # batched
    ((2, 1, 3, 4), (5, 4, 2)),  # batch dimensions broadcast
    ((1, 1), (1, 1)),
])
def test_matmul(backend, shape_a, shape_b):
    """a @ b in 2-D and batched N-D, with broadcast batch dimensions; forward equals NumPy's."""
    a, b = leaf(shape_a, 1), leaf(shape_b, 2)
    np.testing.assert_allclose((a @ b).data, a.data @ b.data, rtol=1e-12)
    assert gradcheck(lambda a, b: a @ b, a, b)


@given(small_shapes)
def test_reshape_and_transpose(shape):
    x = leaf(shape)
    assert gradcheck(lambda x: x.reshape(-1), x)
    assert gradcheck(lambda x: x.transpose(), x)
    axes = tuple(np.random.default_rng(len(shape)).permutation(len(shape)))
    assert gradcheck(lambda x: x.permute(*axes) * np.arange(x.size).reshape(x.data.transpose(axes).shape), x)


@pytest.mark.parametrize("index", [
    1, slice(1, 3), (slice(None), 2), (Ellipsis, 0), ([0, 2, 2], slice(None)), (np.array([[0, 1], [1, 1]]),),
])
def test_indexing(index):
    """Slices, integers and gather-style integer arrays; an element picked twice gets both gradients."""
    x = leaf((3, 4))
    np.testing.assert_array_equal(x[index].data, x.data[index])
    assert gradcheck(lambda x: x[index] * 1.5, x)


@given(st.integers(0, 2), st.integers(1, 3))
def test_concat_and_stack(axis, count):
    parts = [leaf((2, 3, 2), seed=i) for i in range(count)]
    assert gradcheck(lambda *p: concat(p, axis=axis), *parts)
    assert gradcheck(lambda *p: stack(p, axis=axis), *parts)
    np.testing.assert_array_equal(stack(parts, axis=axis).data, np.stack([p.data for p in parts], axis=axis))


def test_shape_errors_name_both_shapes():
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(5,\)"):
        leaf((3, 4)) + leaf((5,))
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(5, 4\)"):
        leaf((3, 4)) @ leaf((5, 4))
    with pytest.raises(ShapeError, match="12 elements"):
        leaf((3, 4)).reshape(5, 2)
    with pytest.raises(ShapeError, match="shape"):
        concat([leaf((2, 3)), leaf((3, 3))], axis=1)
