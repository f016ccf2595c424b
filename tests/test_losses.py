"""The pretraining loss (BERT's MLM + NSP) and the causal loss (GPT's), against formulas written out here.

Exercises: a loss stuck near ln(V) is the classic symptom of a label bug (HF transformers #3983: labels
shifted, or every position ignored). These tests pin down which positions count and with what weight.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from minibert import Tensor, gradcheck
from minibert.errors import ShapeError
from minibert.model import causal_lm_loss, pretraining_loss


def nll(logits, targets):
    """-log softmax(logits)[target], row by row, in plain NumPy."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]


def fake_output(batch=3, masked=4, vocab=11, seed=0):
    """What the model returns, reduced to the two fields the loss reads."""
    rng = np.random.default_rng(seed)
    return SimpleNamespace(mlm_logits=Tensor(rng.standard_normal((batch, masked, vocab)), requires_grad=True),
                           nsp_logits=Tensor(rng.standard_normal((batch, 2)), requires_grad=True))


IDS = np.array([[1, 5, 7, 2], [3, 3, 0, 0], [10, 0, 0, 0]])
WEIGHTS = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=np.float32)
LABELS = np.array([0, 1, 1])


def test_pretraining_loss_is_berts_formula():
    """MLM = sum(w·nll)/(sum(w) + 1e-5); NSP = mean nll; total = MLM + NSP."""
    out = fake_output()
    total, mlm, nsp = pretraining_loss(out, IDS, WEIGHTS, LABELS)
    weights = WEIGHTS.astype(np.float64)  # the loss runs in the logits' dtype
    expected_mlm = (weights * nll(out.mlm_logits.data, IDS)).sum() / (weights.sum() + 1e-5)
    expected_nsp = nll(out.nsp_logits.data, LABELS).mean()
    assert mlm.item() == pytest.approx(expected_mlm, rel=1e-12)
    assert nsp.item() == pytest.approx(expected_nsp, rel=1e-12)
    assert total.item() == pytest.approx(expected_mlm + expected_nsp, rel=1e-12)


def test_pretraining_loss_gradient():
    out = fake_output()
    assert gradcheck(lambda m, n: pretraining_loss(SimpleNamespace(mlm_logits=m, nsp_logits=n), IDS, WEIGHTS,
                                                   LABELS)[0], out.mlm_logits, out.nsp_logits)


def test_zero_weight_slots_do_not_count():
    """Padded masked slots (weight 0) neither change the loss nor receive a gradient, whatever their id."""
    out = fake_output()
    other_ids = np.where(WEIGHTS == 0, 9, IDS)
    total, _, _ = pretraining_loss(out, IDS, WEIGHTS, LABELS)
    assert pretraining_loss(out, other_ids, WEIGHTS, LABELS)[0].item() == total.item()
    total.backward()
    assert np.all(out.mlm_logits.grad[WEIGHTS == 0] == 0)
    assert np.all(np.abs(out.mlm_logits.grad[WEIGHTS == 1]).sum(-1) > 0)


def test_the_right_labels_give_a_small_loss():
    """Logits that put all their weight on the label give a loss near 0; any shift of the labels (the
    ln(V)-plateau bug) gives a large one."""
    vocab = 11
    logits = np.full((3, 4, vocab), -10.0)
    np.put_along_axis(logits, IDS[..., None], 10.0, axis=-1)
    nsp_logits = np.where(np.arange(2) == LABELS[:, None], 10.0, -10.0)
    out = SimpleNamespace(mlm_logits=Tensor(logits), nsp_logits=Tensor(nsp_logits))
    total, _, _ = pretraining_loss(out, IDS, WEIGHTS, LABELS)
    assert total.item() < 1e-6
    assert pretraining_loss(out, (IDS + 1) % vocab, WEIGHTS, LABELS)[1].item() > 10


def test_no_masked_token_gives_zero_not_nan():
    """A batch with every weight 0: the 1e-5 in the denominator keeps the MLM loss 0 instead of 0/0."""
    _, mlm, _ = pretraining_loss(fake_output(), IDS, np.zeros_like(WEIGHTS), LABELS)
    assert mlm.item() == 0.0


def test_nsp_can_be_switched_off():
    """use_nsp=False (RoBERTa): the total is the MLM loss and the NSP logits get no gradient."""
    out = fake_output()
    total, mlm, nsp = pretraining_loss(out, IDS, WEIGHTS, LABELS, use_nsp=False)
    assert nsp is None and total.item() == mlm.item()
    total.backward()
    assert out.nsp_logits.grad is None


def test_full_logits_are_refused_with_a_hint():
    out = SimpleNamespace(mlm_logits=Tensor(np.zeros((3, 9, 11))), nsp_logits=Tensor(np.zeros((3, 2))))
    with pytest.raises(ShapeError, match="masked_positions"):
        pretraining_loss(out, IDS, WEIGHTS, LABELS)


def test_causal_loss_is_the_shifted_mean():
    """Position t predicts token t+1; the mean runs over real targets only (padding is no target)."""
    rng = np.random.default_rng(0)
    logits = Tensor(rng.standard_normal((2, 5, 7)), requires_grad=True)
    input_ids = rng.integers(0, 7, size=(2, 5))
    attention_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    per_position = nll(logits.data[:, :-1], input_ids[:, 1:])  # (2, 4)
    real_targets = attention_mask[:, 1:] == 1
    loss = causal_lm_loss(logits, input_ids, attention_mask)
    assert loss.item() == pytest.approx(per_position[real_targets].mean(), rel=1e-12)
    assert causal_lm_loss(logits, input_ids).item() == pytest.approx(per_position.mean(), rel=1e-12)
    loss.backward()
    assert np.all(logits.grad[:, -1] == 0)  # the last position has no next token
    assert np.all(logits.grad[1, 2:] == 0)  # its targets are padding
    assert gradcheck(lambda x: causal_lm_loss(x, input_ids, attention_mask), logits)


def test_causal_loss_needs_every_position():
    with pytest.raises(ShapeError, match="every position"):
        causal_lm_loss(Tensor(np.zeros((2, 3, 7))), np.zeros((2, 5), dtype=int))
