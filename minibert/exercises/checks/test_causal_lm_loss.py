"""Exercise causal_lm_loss (lesson 10): `causal_lm_loss` in minibert/model/losses.py.

GPT's loss: position t predicts token t+1, at every position that has a next token, averaged over the real
(unpadded) targets: cross_entropy(logits[:, :-1], input_ids[:, 1:]).
"""

import numpy as np

from minibert import Tensor, gradcheck
from minibert.model import causal_lm_loss


def log_prob(row, target):
    shifted = row - row.max()
    return shifted[target] - np.log(np.exp(shifted).sum())


def test_value_matches_the_shifted_definition():
    """Loss = mean over b and t < S-1 of -log p(input_ids[b, t+1] | logits[b, t]), written as a loop."""
    rng = np.random.default_rng(0)
    logits, ids = rng.standard_normal((2, 5, 6)), rng.integers(0, 6, size=(2, 5))
    want = -np.mean([log_prob(logits[b, t], ids[b, t + 1]) for b in range(2) for t in range(4)])
    np.testing.assert_allclose(causal_lm_loss(Tensor(logits), ids).item(), want, rtol=1e-10)


def test_padding_targets_are_left_out():
    """Sequence 1 ends in two [PAD]s (attention_mask 0): only its first 2 transitions count."""
    rng = np.random.default_rng(1)
    logits, ids = rng.standard_normal((2, 5, 6)), rng.integers(0, 6, size=(2, 5))
    attention_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    terms = [log_prob(logits[0, t], ids[0, t + 1]) for t in range(4)]
    terms += [log_prob(logits[1, t], ids[1, t + 1]) for t in range(2)]
    np.testing.assert_allclose(causal_lm_loss(Tensor(logits), ids, attention_mask).item(), -np.mean(terms),
                               rtol=1e-10)


def test_last_position_gets_no_gradient_and_gradcheck_passes():
    """The last position predicts nothing, so its logits get a zero gradient; all others get one."""
    rng = np.random.default_rng(2)
    logits = Tensor(rng.standard_normal((1, 4, 5)), requires_grad=True)
    ids = rng.integers(0, 5, size=(1, 4))
    causal_lm_loss(logits, ids).backward()
    assert not logits.grad[0, -1].any()
    assert all(logits.grad[0, t].any() for t in range(3))
    assert gradcheck(lambda x: causal_lm_loss(x, ids), logits)
