"""Exercise linear_forward (lesson 03): `LinearOp.forward` in minibert/functional.py.

y = x·Wᵀ + b for x of any number of leading axes: fold them into rows, one matmul, add the bias, unfold.
The referee is NumPy's x @ W.T + b.
"""

import numpy as np

from minibert import functional as F


def test_matches_x_times_w_transposed_plus_b():
    """x (2, 3, 4), W (4, 4) (square, so a missing transpose shows), b (4,): x @ W.T + b, shape (2, 3, 4);
    without a bias, x @ W.T."""
    rng = np.random.default_rng(0)
    x, weight, bias = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 4)), rng.standard_normal(4)
    got = F.linear(x, weight, bias)
    assert got.shape == (2, 3, 4), f"expected the leading axes back, (2, 3, 4); got {got.shape}"
    np.testing.assert_allclose(got.data, x @ weight.T + bias, rtol=1e-12, err_msg="expected x·Wᵀ + b")
    np.testing.assert_allclose(F.linear(x, weight).data, x @ weight.T, rtol=1e-12, err_msg="expected x·Wᵀ")


def test_widening_keeps_the_leading_axes():
    """x (2, 3, 4) and W (5, 4): y is (2, 3, 5)."""
    rng = np.random.default_rng(1)
    x, weight = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))
    got = F.linear(x, weight)
    assert got.shape == (2, 3, 5), f"expected (2, 3, 5), got {got.shape}"
    np.testing.assert_allclose(got.data, x @ weight.T, rtol=1e-12)
