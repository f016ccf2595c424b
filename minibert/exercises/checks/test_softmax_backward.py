"""Exercise softmax_backward (lesson 04): `softmax_backward_numpy` in minibert/kernels/softmax.py.

The referees: the full Jacobian built entry by entry, J[i, j] = y_i (δ_ij - y_j), and gradcheck of
F.softmax (the workspace runs on the NumPy backend, so F.softmax's backward is your function).
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F
from minibert.kernels.softmax import softmax_backward_numpy, softmax_forward_numpy


def test_matches_the_jacobian_row_by_row():
    """For each row, grad_x = Jᵀ · grad_y with the Jacobian written out as a (C, C) matrix."""
    rng = np.random.default_rng(0)
    x, grad_y = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))
    y = softmax_forward_numpy(x)
    got = softmax_backward_numpy(grad_y, y)
    assert got.shape == x.shape
    for index in np.ndindex(x.shape[:-1]):
        row = y[index]
        jacobian = np.diag(row) - np.outer(row, row)
        np.testing.assert_allclose(got[index], jacobian.T @ grad_y[index], rtol=1e-10, atol=1e-12)


def test_gradient_of_a_constant_shift_is_zero():
    """softmax(x + c) = softmax(x), so the gradient summed over a row is 0 whatever grad_y is."""
    rng = np.random.default_rng(1)
    y = softmax_forward_numpy(rng.standard_normal((4, 6)))
    got = softmax_backward_numpy(rng.standard_normal((4, 6)), y)
    np.testing.assert_allclose(got.sum(axis=-1), 0.0, atol=1e-12)


def test_gradcheck_softmax_with_a_padding_mask():
    """F.softmax over (2, 2, 3, 4) scores with the last key of batch 1 masked: finite differences agree."""
    rng = np.random.default_rng(2)
    scores = Tensor(rng.standard_normal((2, 2, 3, 4)), requires_grad=True)
    keep = np.ones((2, 1, 1, 4), dtype=bool)
    keep[1, ..., 3] = False
    weights = rng.standard_normal((2, 2, 3, 4))
    assert gradcheck(lambda s: F.softmax(s, mask=keep) * weights, scores)
