"""Exercise masked_lm_correct (lesson 12): `masked_lm_correct` in minibert/train/metrics.py.

(correct, total) over the real masked slots: a guess is the logits' argmax; a slot of weight 0 is padding
and counts in neither number.
"""

import numpy as np

from minibert.train.metrics import masked_lm_correct


def test_counts_by_hand():
    """Two sequences of 3 slots, the last slot of the second padding: guesses [2, 0, 1] and [1, 1, ·] against
    ids [2, 1, 1] and [1, 0, 1]: 3 right of the 5 real slots."""
    logits = np.zeros((2, 3, 3))
    for (b, p), guess in np.ndenumerate(np.array([[2, 0, 1], [1, 1, 1]])):
        logits[b, p, guess] = 1.0
    ids = np.array([[2, 1, 1], [1, 0, 1]])
    weights = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    assert masked_lm_correct(logits, ids, weights) == (3, 5)


def test_padding_slots_never_count():
    """All slots of weight 0: (0, 0), whatever the guesses."""
    logits = np.random.default_rng(0).standard_normal((2, 2, 4))
    assert masked_lm_correct(logits, np.argmax(logits, -1), np.zeros((2, 2))) == (0, 0)
