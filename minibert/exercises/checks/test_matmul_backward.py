"""Exercise matmul_backward (lesson 03): `matmul_backward_numpy` in minibert/kernels/matmul.py.

c = a @ b, c_mn = Σ_k a_mk b_kn  ->  grad_a = grad_c·bᵀ, grad_b = aᵀ·grad_c, on the last two axes of batched
arrays. The referee is finite differences through `@`, on square matrices, where a missing transpose or
swapped gradients keep their shapes and lose their numbers.
"""

import numpy as np

from minibert import Tensor, gradcheck


def test_gradcheck_square_matrices():
    """a (4, 4) @ b (4, 4): both gradients agree with finite differences."""
    rng = np.random.default_rng(0)
    a, b = (Tensor(rng.standard_normal((4, 4)), requires_grad=True) for _ in range(2))
    projection = rng.standard_normal((4, 4))
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))


def test_gradcheck_batched_attention_shapes():
    """(2, 3, 5, 4) @ (2, 3, 4, 5), as attention's scores: both gradients agree with finite differences."""
    rng = np.random.default_rng(1)
    a = Tensor(rng.standard_normal((2, 3, 5, 4)), requires_grad=True)
    b = Tensor(rng.standard_normal((2, 3, 4, 5)), requires_grad=True)
    projection = rng.standard_normal((2, 3, 5, 5))
    assert gradcheck(lambda a, b: (a @ b) * projection, a, b, names=("a", "b"))
