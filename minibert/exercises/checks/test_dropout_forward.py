"""Exercise dropout_forward (lesson 05b): `DropoutOp.forward` in minibert/functional.py.

Inverted dropout (Srivastava et al. 2014, as PyTorch and BERT): keep each element with probability 1 - p
and scale the kept ones by 1/(1 - p) during training, so that eval mode is the identity. The scale is
saved: the backward multiplies by it. Tested with p > 0, in training and in evaluation.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert import functional as F


def test_kept_share_and_scale_in_training():
    """p = 0.3 on 100,000 ones: about 70% kept (within 1%), each kept one equal to 1/0.7, the rest 0."""
    y = F.dropout(Tensor(np.ones(100_000)), 0.3, True, np.random.default_rng(0)).data
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01, f"kept share {kept.mean():.3f}; keep with probability 1 - p"
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-12, err_msg="scale the kept elements by 1/(1 - p)")


def test_the_identity_in_evaluation():
    """p = 0.3 in eval mode: the output is the input, untouched."""
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_array_equal(F.dropout(Tensor(x), 0.3, False, np.random.default_rng(0)).data, x)


def test_gradcheck_with_the_same_draws():
    """p = 0.4 in training, the same draws at every evaluation: the gradient agrees with finite differences
    (1/(1 - p) where kept, 0 where dropped)."""
    x = Tensor(np.random.default_rng(2).standard_normal((4, 5)), requires_grad=True)
    projection = np.random.default_rng(3).standard_normal((4, 5))
    assert gradcheck(lambda x: F.dropout(x, 0.4, True, np.random.default_rng(7)) * projection, x, names=("x",))
