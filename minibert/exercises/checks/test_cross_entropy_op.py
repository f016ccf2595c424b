"""Exercise cross_entropy_op (lesson 10): `CrossEntropyOp.forward` in minibert/model/losses.py.

The loss over rows: Σ_i w_i·nll_i / denominator, with nll_i from the kernel, w_i the row's weight (1 for a
plain mean, 0 for a padding slot or an ignored target) and the denominator the number of rows counted (or
Σw + 1e-5, as BERT's MLM loss). The referee is the definition in NumPy.
"""

import numpy as np

from minibert.model.losses import cross_entropy


def nll(logits, targets):
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]


def test_the_mean_over_rows():
    """Logits (2, 3, 5): the mean nll over the 6 rows."""
    rng = np.random.default_rng(0)
    logits, targets = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, size=(2, 3))
    np.testing.assert_allclose(cross_entropy(logits, targets).data, nll(logits, targets).mean(), rtol=1e-12)


def test_weights_as_bert_s_mlm_loss():
    """Weights with a 0: Σ w·nll / (Σ w + 1e-5)."""
    rng = np.random.default_rng(1)
    logits, targets = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, size=(2, 3))
    weights = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    want = (weights * nll(logits, targets)).sum() / (weights.sum() + 1e-5)
    np.testing.assert_allclose(cross_entropy(logits, targets, weights=weights).data, want, rtol=1e-12)
