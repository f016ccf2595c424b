"""Exercise matmul_op_backward (lesson 03): `MatMul.backward` in minibert/autograd/ops.py.

out = a @ b  ->  d/da = grad·bᵀ, d/db = aᵀ·grad (the last two axes transposed). For activations (..., K)
@ a weight (K, N), the leading axes are folded into rows; for batched operands, each gradient is summed back
over the batch axes its input was broadcast along. The referee is finite differences.
"""

import numpy as np

from minibert import Tensor, gradcheck


def test_gradcheck_square_batches():
    """(2, 4, 4) @ (2, 4, 4): square, so a missing transpose keeps the shapes and loses the numbers; both
    gradients agree with finite differences."""
    rng = np.random.default_rng(2)
    a, b = (Tensor(rng.standard_normal((2, 4, 4)), requires_grad=True) for _ in range(2))
    projection = rng.standard_normal((2, 4, 4))
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))


def test_gradcheck_activations_times_a_weight():
    """(2, 3, 4) @ (4, 5): both gradients agree with finite differences."""
    rng = np.random.default_rng(0)
    a = Tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    b = Tensor(rng.standard_normal((4, 5)), requires_grad=True)
    projection = rng.standard_normal((2, 3, 5))
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))


def test_gradcheck_broadcast_batch_axes():
    """(2, 3, 4, 5) @ (3, 5, 2): b is shared by the first batch axis, so its gradient is summed over it."""
    rng = np.random.default_rng(1)
    a = Tensor(rng.standard_normal((2, 3, 4, 5)), requires_grad=True)
    b = Tensor(rng.standard_normal((3, 5, 2)), requires_grad=True)
    projection = rng.standard_normal((2, 3, 4, 2))
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))
