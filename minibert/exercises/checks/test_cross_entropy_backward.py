"""Exercise cross_entropy_backward (lesson 10): `softmax_cross_entropy_backward_numpy` in
minibert/kernels/cross_entropy.py.

d nll_i / d z_ij = softmax(z_i)_j - [j == t_i], times the gradient arriving for row i. The referee is
finite differences of cross_entropy, with weights per row (as the MLM loss has).
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.model.losses import cross_entropy


def test_gradcheck_weighted_rows():
    """Logits (2, 3, 6), targets, and a weight per row (one of them 0): the gradient agrees with finite
    differences."""
    rng = np.random.default_rng(0)
    logits = Tensor(rng.standard_normal((2, 3, 6)), requires_grad=True)
    targets = np.array([[1, 5, 0], [2, 2, 4]])
    weights = np.array([[1.0, 0.5, 0.0], [2.0, 1.0, 1.0]])
    assert gradcheck(lambda z: cross_entropy(z, targets, weights=weights), logits, names=("logits",))


def test_gradcheck_mean_over_rows():
    """The plain mean (every row weight 1/N): the gradient agrees with finite differences."""
    logits = Tensor(np.random.default_rng(1).standard_normal((4, 5)), requires_grad=True)
    assert gradcheck(lambda z: cross_entropy(z, np.array([0, 4, 2, 2])), logits, names=("logits",))
