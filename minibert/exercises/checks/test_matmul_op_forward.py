"""Exercise matmul_op_forward (lesson 03): `MatMul.forward` in minibert/autograd/ops.py.

a @ b: activations (..., K) times a weight (K, N) fold their leading axes into rows for one matmul and unfold
them after; batched operands broadcast their batch axes as NumPy does. It saves a and b for the backward.
The referee is the product written with loops, and finite differences.
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck


def loop_matmul(a, b):
    """One dot product per output entry."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out[i, j] = sum(a[i, k] * b[k, j] for k in range(a.shape[1]))
    return out


def test_activations_times_a_weight():
    """(2, 3, 4) @ (4, 5) is (2, 3, 5), each sequence's rows times the weight."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    out = (Tensor(a) @ Tensor(b)).data
    assert out.shape == (2, 3, 5), f"expected (2, 3, 5): the leading axes (2, 3) unfolded again, got {out.shape}"
    for n in range(2):
        np.testing.assert_allclose(out[n], loop_matmul(a[n], b), rtol=1e-12)


def test_a_square_weight():
    """(2, 3, 4) @ (4, 4): square, so a transposed weight keeps the shape and loses the numbers."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 4))
    out = (Tensor(a) @ Tensor(b)).data
    for n in range(2):
        np.testing.assert_allclose(out[n], loop_matmul(a[n], b), rtol=1e-12)


def test_batches_broadcast():
    """(2, 1, 4, 4) @ (3, 4, 4) is (2, 3, 4, 4): every a of the first axis times every b of the second."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 1, 4, 4)), rng.standard_normal((3, 4, 4))
    out = (Tensor(a) @ Tensor(b)).data
    assert out.shape == (2, 3, 4, 4), f"expected the batch axes broadcast to (2, 3), got {out.shape}"
    for n, m in np.ndindex(2, 3):
        np.testing.assert_allclose(out[n, m], loop_matmul(a[n, 0], b[m]), rtol=1e-12)


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 2))])
def test_gradcheck_both_cases(shape_a, shape_b):
    """Through the backward, which reads what the forward saved: both gradients agree with finite
    differences, for a weight and for batches."""
    rng = np.random.default_rng(3)
    a, b = (Tensor(rng.standard_normal(shape), requires_grad=True) for shape in (shape_a, shape_b))
    projection = rng.standard_normal(shape_a[:-1] + shape_b[-1:])
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))
