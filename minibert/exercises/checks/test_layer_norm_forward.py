"""Exercise layer_norm_forward (lesson 04): `layer_norm_forward_numpy` in minibert/kernels/layernorm.py.

Each row: y = (x - mean)/√(var + eps)·weight + bias, with the biased variance (divide by H); also returns the
row's mean and rstd = 1/√(var + eps), which the backward uses. The referee is the definition in NumPy.
"""

import numpy as np

from minibert.kernels.layernorm import layer_norm_forward_numpy


def test_matches_the_definition():
    """x (2, 3, 5) with a weight and bias not 1 and 0: y, mean (2, 3) and rstd (2, 3)."""
    rng = np.random.default_rng(0)
    x, weight, bias = 3 + 2 * rng.standard_normal((2, 3, 5)), rng.standard_normal(5), rng.standard_normal(5)
    y, mean, rstd = layer_norm_forward_numpy(x, weight, bias, 1e-5)
    want_mean, want_var = x.mean(-1), x.var(-1)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-12, err_msg="the mean of each row, shape (2, 3)")
    np.testing.assert_allclose(rstd, 1 / np.sqrt(want_var + 1e-5), rtol=1e-12,
                               err_msg="rstd = 1/sqrt(var + eps), var divided by H")
    want = (x - want_mean[..., None]) / np.sqrt(want_var[..., None] + 1e-5) * weight + bias
    np.testing.assert_allclose(y, want, rtol=1e-12, err_msg="expected (x - mean)/sqrt(var + eps)·weight + bias")


def test_eps_matters_for_a_constant_row():
    """A constant row has variance 0: y = bias (not NaN), rstd = 1/√eps."""
    y, _, rstd = layer_norm_forward_numpy(np.full((1, 4), 7.0), np.ones(4), np.arange(4.0), 1e-2)
    np.testing.assert_allclose(y, [[0, 1, 2, 3]], atol=1e-12)
    np.testing.assert_allclose(rstd, [10.0], rtol=1e-12)
