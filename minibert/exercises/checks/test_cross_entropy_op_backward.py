"""Exercise cross_entropy_op_backward (lesson 10): `CrossEntropyOp.backward` in minibert/model/losses.py.

loss = Σ_i w_i·nll_i with w already divided by the denominator  ->  d loss/d logits_i = grad·w_i·(softmax_i -
onehot_i): each row's weight times the incoming gradient goes into the kernel, and the result takes the
logits' shape back; targets and weights get no gradient. The referee is the formula in NumPy, and finite
differences.
"""

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert.model.losses import CrossEntropyOp, cross_entropy

LOGITS = np.random.default_rng(0).standard_normal((2, 2, 3))  # (B, P, V)
TARGETS = np.array([[2, 0], [1, 1]])
WEIGHTS = np.array([[1.0, 0.0], [1.0, 1.0]])  # slot (0, 1) is padding


def test_gradient_by_hand():
    """Loss times 3: the logits' gradient is 3·w_i/Σw·(softmax - onehot), in (B, P, V); padding's row is 0."""
    op = CrossEntropyOp()
    op.forward(LOGITS, TARGETS, WEIGHTS, denominator=3.0)
    grad_logits = op.backward(np.asarray(3.0))[0]
    assert grad_logits.shape == (2, 2, 3), f"expected the logits' shape (2, 2, 3), got {grad_logits.shape}"
    softmax = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    onehot = np.eye(3)[TARGETS]
    want = 3 * (WEIGHTS / 3.0)[..., None] * (softmax - onehot)
    np.testing.assert_allclose(grad_logits, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weights", [WEIGHTS, None], ids=["weighted", "mean"])
def test_gradcheck_weighted_and_mean(weights):
    """BERT's weighted form and the plain mean, scaled by 2.5: finite differences agree."""
    logits = Tensor(LOGITS.copy(), requires_grad=True)
    assert gradcheck(lambda logits: cross_entropy(logits, TARGETS, weights) * 2.5, logits, names=("logits",))
