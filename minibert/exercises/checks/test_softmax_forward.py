"""Exercise softmax_forward (lesson 04): `softmax_forward_numpy` in minibert/kernels/softmax.py.

softmax over the last axis, after adding the additive mask (0 where visible, a huge negative number where
hidden), with each row's max subtracted first so that exp never overflows. The referee is the definition.
"""

import numpy as np

from minibert.kernels.softmax import softmax_forward_numpy


def test_matches_the_definition_over_the_last_axis():
    """x (2, 3, 4): exp(x)/Σ exp(x) over the last axis."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    want = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    np.testing.assert_allclose(softmax_forward_numpy(x), want, rtol=1e-12, err_msg="softmax over the last axis")


def test_the_mask_hides_keys():
    """An additive mask of -1e9 on two keys: they get 0, the others share 1 as softmax of the rest."""
    x = np.random.default_rng(1).standard_normal((2, 4))
    mask = np.array([0.0, -1e9, 0.0, -1e9])
    got = softmax_forward_numpy(x, mask)
    np.testing.assert_allclose(got[:, [1, 3]], 0, atol=1e-12, err_msg="masked keys must get weight 0")
    visible = np.exp(x[:, [0, 2]])
    np.testing.assert_allclose(got[:, [0, 2]], visible / visible.sum(-1, keepdims=True), rtol=1e-12)


def test_large_inputs_do_not_overflow():
    """Entries near 1000: the same probabilities as the entries shifted down by 1000."""
    x = np.random.default_rng(2).standard_normal((3, 5))
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow shows as inf or nan below
        large = softmax_forward_numpy(x + 1000.0)
    np.testing.assert_allclose(large, softmax_forward_numpy(x), rtol=1e-9, err_msg="subtract each row's max")
