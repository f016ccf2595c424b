"""Exercise additive_mask (lesson 05): `additive_mask` in minibert/functional.py.

The softmax kernel adds its mask to the scores. A boolean mask (True = keep) becomes 0 where kept and the
dtype's most negative finite number where dropped (as HF does; Google used -10000), in the scores' dtype, so
exp() gives 0 there; a float mask is already additive and passes through. The referee is the values by hand
and the softmax over them.
"""

import numpy as np
import pytest

from minibert import Tensor
from minibert import functional as F
from minibert.functional import additive_mask


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_booleans_become_zero_or_the_most_negative_float(dtype):
    """[True, False, True] -> [0, finfo.min, 0], in the scores' dtype."""
    got = additive_mask(np.array([True, False, True]), dtype)
    assert got.dtype == dtype, f"expected {np.dtype(dtype)}, the scores' dtype, got {got.dtype}"
    np.testing.assert_array_equal(got, [0, np.finfo(dtype).min, 0])


def test_a_float_mask_passes_through():
    """An additive mask [0, -10000] (Google's form) comes back as it is."""
    np.testing.assert_array_equal(additive_mask(np.array([0.0, -10000.0]), np.float64), [0.0, -10000.0])


def test_the_softmax_over_it():
    """Scores [1, 2, 3] with the middle key dropped: weights e/(e + e³) and 0; a row with every key dropped
    gives finite weights, not nan."""
    scores = Tensor(np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]))
    keep = np.array([[True, False, True], [False, False, False]])
    probs = F.softmax(scores, mask=keep).data
    e1, e3 = np.exp(1.0), np.exp(3.0)
    np.testing.assert_allclose(probs[0], [e1 / (e1 + e3), 0.0, e3 / (e1 + e3)], rtol=1e-12)
    assert np.isfinite(probs[1]).all(), f"a row with every key dropped gave {probs[1]}"
