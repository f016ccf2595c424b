"""Exercise cross_entropy_forward (lesson 10): `softmax_cross_entropy_forward_numpy` in
minibert/kernels/cross_entropy.py.

nll_i = logsumexp(z_i) - z_i[t_i], with the row's max subtracted before exp so that large logits do not
overflow. Returns (nll, logsumexp), one number per row. The referee is the definition in NumPy, and rows
of logits near 1000.
"""

import numpy as np

from minibert.kernels.cross_entropy import softmax_cross_entropy_forward_numpy


def test_matches_minus_log_softmax_at_the_target():
    """Random logits (5, 7): nll = -log softmax(z)[t] and logsumexp = log Σ exp z, row by row."""
    rng = np.random.default_rng(0)
    logits, targets = rng.standard_normal((5, 7)), np.array([0, 6, 3, 3, 1])
    nll, logsumexp = softmax_cross_entropy_forward_numpy(logits, targets)
    want_lse = np.log(np.exp(logits).sum(-1))
    np.testing.assert_allclose(logsumexp, want_lse, rtol=1e-12, err_msg="logsumexp of each row")
    np.testing.assert_allclose(nll, want_lse - logits[np.arange(5), targets], rtol=1e-12,
                               err_msg="nll = logsumexp - the target's logit")


def test_large_logits_do_not_overflow():
    """Logits near 1000 (exp overflows): the same nll as the logits shifted down by 1000."""
    rng = np.random.default_rng(1)
    logits, targets = rng.standard_normal((3, 4)), np.array([2, 0, 3])
    shifted, _ = softmax_cross_entropy_forward_numpy(logits, targets)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow shows as inf or nan below
        large, _ = softmax_cross_entropy_forward_numpy(logits + 1000.0, targets)
    np.testing.assert_allclose(large, shifted, rtol=1e-9, err_msg="subtract each row's max before exp")
