"""Exercise mlm_loss (lesson 10): `pretraining_loss` in minibert/model/losses.py.

MLM = sum(w·nll) / (sum(w) + 1e-5) over the masked slots (Google run_pretraining.py); NSP = mean
cross-entropy of the two classes; total = MLM + NSP. The referee computes both with plain NumPy.
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.model import PreTrainingOutput, pretraining_loss


def nll(logits, targets):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]


def batch(seed=0):
    rng = np.random.default_rng(seed)
    mlm_logits = Tensor(rng.standard_normal((2, 3, 7)), requires_grad=True)  # B=2, P=3, V=7
    nsp_logits = Tensor(rng.standard_normal((2, 2)), requires_grad=True)
    output = PreTrainingOutput(None, None, mlm_logits, nsp_logits)
    ids = np.array([[4, 1, 0], [6, 2, 0]])
    weights = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])  # sequence 0: 2 masked tokens, 1 padding slot
    labels = np.array([0, 1])
    return output, ids, weights, labels


def test_values_match_numpy():
    """total, mlm and nsp equal the formulas, with the padding slot left out of the MLM average."""
    output, ids, weights, labels = batch()
    total, mlm, nsp = pretraining_loss(output, ids, weights, labels)
    want_mlm = (weights * nll(output.mlm_logits.data, ids)).sum() / (weights.sum() + 1e-5)
    want_nsp = nll(output.nsp_logits.data, labels).mean()
    np.testing.assert_allclose(mlm.item(), want_mlm, rtol=1e-10)
    np.testing.assert_allclose(nsp.item(), want_nsp, rtol=1e-10)
    np.testing.assert_allclose(total.item(), want_mlm + want_nsp, rtol=1e-10)


def test_without_nsp_the_total_is_the_mlm_loss():
    """use_nsp=False (RoBERTa): nsp is None and total equals mlm."""
    output, ids, weights, labels = batch(1)
    total, mlm, nsp = pretraining_loss(output, ids, weights, labels, use_nsp=False)
    assert nsp is None
    assert total.item() == mlm.item()


def test_padding_slots_get_no_gradient_and_gradcheck_passes():
    """The slot with weight 0 receives an all-zero gradient; every gradient agrees with finite differences."""
    output, ids, weights, labels = batch(2)
    pretraining_loss(output, ids, weights, labels)[0].backward()
    assert not output.mlm_logits.grad[0, 2].any()
    assert output.mlm_logits.grad[0, 0].any()
    def total(mlm_logits, nsp_logits):
        output = PreTrainingOutput(None, None, mlm_logits, nsp_logits)
        return pretraining_loss(output, ids, weights, labels)[0]
    assert gradcheck(total, output.mlm_logits, output.nsp_logits)
